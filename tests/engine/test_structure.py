"""Every game has the same shape (docs/adding-a-game.md), checked on the source tree.

* A package per game under ``engine/games/`` with ``actions.py``, ``rules.py`` and
  ``bots.py``; the package registers its games itself.
* Nothing in ``engine`` imports in a circle (a game and its bots included).
* One phase table per game, and no game does its own dispatch: ``Game`` looks up the
  handler and the legal moves, and decodes untrusted actions.
"""

import ast
from pathlib import Path

import pytest

from engine import registry
from engine.game import Game, Phase

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
GAMES = sorted(p.name for p in (ENGINE / "games").iterdir() if (p / "__init__.py").exists())
DRIVER = {"apply", "handle", "legal_actions", "decode_action", "encode_action", "start"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` is imported (not inside functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_engine_imports_nothing_in_a_circle():
    modules = {module_name(p): p for p in ENGINE.rglob("*.py")}
    graph = {
        m: {i for i in top_level_imports(p) if i in modules and i != m} for m, p in modules.items()
    }
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            cycle = path[path.index(m) :] + [m]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if m in done:
            return
        for n in sorted(graph[m]):
            visit(n, [*path, m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])


@pytest.mark.parametrize("game", GAMES)
def test_a_package_per_game(game):
    folder = ENGINE / "games" / game
    assert {"actions.py", "rules.py", "bots.py"} <= {p.name for p in folder.iterdir()}
    assert not {f"engine.games.{game}.bots"} & top_level_imports(folder / "rules.py")
    assert "register(" in (folder / "__init__.py").read_text(encoding="utf-8")


def test_the_registry_names_no_game_module():
    text = (ENGINE / "registry.py").read_text(encoding="utf-8")
    assert not any(f"games.{g}" in text for g in GAMES)


def all_game_classes() -> list[type[Game]]:
    registry.names()  # loads every game
    found, todo = [], list(Game.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("engine.games.") and cls.PHASES:
            found.append(cls)
    return found


def test_one_phase_table_per_game_and_no_game_dispatches_itself():
    classes = all_game_classes()
    assert {c.NAME for c in classes} >= set(registry.names()) | {"high-card"}
    for cls in classes:
        for klass in cls.__mro__:
            if klass is Game:
                break
            assert not DRIVER & set(vars(klass)), f"{klass.__name__} overrides the driver"
        assert cls.ACTIONS, cls
        for name, phase in cls.PHASES.items():
            assert isinstance(phase, Phase), (cls, name)
            assert all(callable(h) for h in phase.actions.values()), (cls, name)
            assert phase.legal is None or callable(phase.legal), (cls, name)
            if phase.actions:
                assert phase.legal is not None, f"{cls.__name__}: phase {name} has no legal moves"
