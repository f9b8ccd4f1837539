"""Test tiers, marked automatically: ``make check`` runs what needs no child process.

Every test is classified at collection time, never by hand:

* ``process``: the test starts a child process. Found by reading the code the test
  runs: its own function, the fixtures it uses, and (transitively) the functions and
  classes of its module that they call. Any of them naming :mod:`subprocess` or a
  helper module that starts peers (:data:`PROCESS_HELPERS`) makes the test a process
  test.
* ``netns`` and ``tmux``: the test files that build network namespaces or drive a
  terminal (:data:`FILE_MARKS`); both are also ``process``.
* ``slow``: in-process tests that are too long for the working tier: the ones that
  play hundreds of random games or whole tables of real nodes (:data:`SLOW`, by file or
  by test function, with the reason).

``make check`` deselects ``process`` and ``slow``; ``make test`` (CI) runs everything.

The classification is enforced, not trusted: a test that is not marked ``process``
and starts a child process anyway fails (``subprocess.Popen`` is refused for it), so
the fast tier can never quietly grow a child process, and a miss here shows up in CI.
"""

from __future__ import annotations

import dis
import functools
import inspect
import subprocess
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

PROCESS_HELPERS = frozenset(
    {
        "subprocess",
        "tests.p2p._procs",
        "tests.p2p._games",
        "tests.p2p._faults",
    }
)
"""Modules whose use means a child process: the standard one, and the test helpers that
start ``cli.net`` peers, whole game tables of them, or ``slaiga verify``."""

PROJECT = frozenset({"engine", "crypto", "p2p", "cli", "bench", "tests"})
"""The project's packages: the code a test calls into is read through these."""

PROCESS_CALLS = frozenset(
    {"Popen", "run_process", "open_process", "create_subprocess_exec", "create_subprocess_shell"}
)
"""Names of calls that start a child process from elsewhere (Trio's, asyncio's): naming one
(``trio.run_process(...)``) marks the test too."""

FILE_MARKS = {
    "tests/p2p/test_netns.py": ("netns", "process"),
    "tests/cli/test_tmux.py": ("tmux", "process"),
}
"""Whole files, by path from the repository root, and the markers every test in them gets."""

SLOW = {
    "tests/engine/test_slaiga_random.py::test_random_games_conserve_cards_and_end": (
        "2,000 random games, card conservation checked after every action"
    ),
    "tests/engine/test_slaiga_random.py::test_heuristic_games_finish_with_places": (
        "120 whole games between heuristic bots"
    ),
    "tests/engine/test_aight.py::test_thousands_of_random_games_conserve_cards_and_keep_rules_valid": (
        "thousands of random games"
    ),
    "tests/engine/test_slave.py::test_random_play_thousands_of_deals": "thousands of deals",
    "tests/engine/test_slajens.py::test_random_play_score_arithmetic": "random games per option",
    "tests/p2p/test_node_loopback.py": "whole tables of real nodes, up to 8 seats, 300 steps",
    "tests/p2p/test_game_privacy.py": "whole games with every proof, privacy checked throughout",
    "tests/p2p/test_survive_privacy.py": (
        "whole games with escrow, every coalition's privacy checked throughout"
    ),
    "tests/p2p/test_offload.py::test_the_receiver_checks_a_gift_ahead_and_not_on_the_loop": (
        "a whole Slave exchange with the worst-case gift proof"
    ),
    "tests/p2p/test_vanished.py::test_a_vanished_player_is_named_by_everyone_left": (
        "waits out the silence limits of a real table"
    ),
    "tests/p2p/test_spectator.py::test_spectators_reach_the_seats_result_and_open_no_hidden_card": (
        "whole games with every proof, followed by spectators, privacy checked throughout"
    ),
    "tests/p2p/test_spectator.py::test_a_lie_shown_later_is_named_at_its_action_step": (
        "whole Slaiga games until a lie comes up (deals are random, so a few)"
    ),
    "tests/crypto/test_bench_crypto.py": "a real (quick) crypto benchmark run",
    "tests/p2p/test_late_lies.py": (
        "whole Slaiga games until each kind of lie comes up (deals are random, so a few)"
    ),
    "tests/p2p/test_survive.py": (
        "whole games with every proof while a seat is lost and the others act for it"
    ),
    "tests/p2p/test_verify_fuzz.py": "a whole Slave game, then Hypothesis verifies doctored copies",
    "tests/p2p/test_offload.py::test_our_gift_is_made_ahead_and_not_again_on_the_loop": (
        "a two-deal Slave table with every proof"
    ),
    "tests/p2p/test_local_table.py::test_a_cheating_seat_is_named_by_every_honest_seat": (
        "whole Slave tables with every proof until the cheating seat has its chance"
    ),
    "tests/p2p/test_local_table.py::test_the_later_table_options_play_on_the_real_path": (
        "whole Aight and Slåjens tables with every proof"
    ),
    "tests/crypto/test_shuffle.py::test_both_proofs_verify_the_same_full_size_shuffle": (
        "52- and 104-card shuffles proved and verified by both proofs"
    ),
    "tests/test_bench_adversary.py::test_a_seeded_run_holds_the_property": (
        "25 seeded adversary tables"
    ),
    "tests/test_bench_adversary.py::test_a_table_of_a_kind_that_cannot_fork_gets_its_turn": (
        "three seeded adversary tables per kind"
    ),
    "tests/p2p/test_open_hands.py::test_a_colluding_junk_gift_is_exposed_by_the_opened_hands": (
        "a colluding Slave table played to its end, every proof checked"
    ),
    "tests/p2p/test_open_hands.py::test_without_the_option_the_colluding_gift_stays_a_caveat": (
        "a colluding Slave table played to its end, every proof checked"
    ),
    "tests/p2p/test_gift.py": (
        "each test plays its own Slave table, every proof checked, to the second deal's "
        "exchange (a shared table would let it join make check)"
    ),
}
"""In-process tests too long for ``make check``, by file or by ``file::function`` (every
parametrisation), with why. ``make check`` prints the tests that took longest, so a test
that should join this list shows itself."""

ROOT = Path(__file__).resolve().parents[1]


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _functions_of(obj: object) -> list[types.FunctionType]:
    """The plain functions behind ``obj``: itself, or the methods of a class."""
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if isinstance(obj, types.FunctionType):
        return [obj]
    if isinstance(obj, type):
        found = []
        for value in vars(obj).values():
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if isinstance(value, types.FunctionType):
                found.append(value)
        return found
    return []


@functools.cache
def _attributes_of(code: types.CodeType, name: str) -> frozenset[str]:
    """The attributes ``code`` reads from the global ``name`` (``flood.rss`` gives rss)."""
    found = set()
    previous = None
    for instr in dis.get_instructions(code):
        if (
            previous is not None
            and previous.opname in ("LOAD_GLOBAL", "LOAD_NAME")
            and previous.argval == name
            and instr.opname in ("LOAD_ATTR", "LOAD_METHOD")
        ):
            found.add(instr.argval)
        previous = instr
    return frozenset(found)


def _ours(module_name: str | None, home: str) -> bool:
    """A module of this project (a package of :data:`PROJECT`, or the test's own module)."""
    return module_name is not None and (
        module_name == home or module_name.split(".", 1)[0] in PROJECT
    )


def _starts_processes(fn: types.FunctionType, seen: set[types.CodeType]) -> bool:
    """Whether ``fn``, or a function or class of this project that it names (in its own
    module, or as ``module.name`` of a project module), uses a module from
    :data:`PROCESS_HELPERS` (as a module, or through a name imported from one; ``import``
    statements inside functions count too)."""
    module = fn.__module__
    scope = fn.__globals__
    for code in _code_objects(fn.__code__):
        if code in seen or code in _CLEAN:
            continue
        seen.add(code)
        for name in code.co_names:
            if name in PROCESS_HELPERS or name in PROCESS_CALLS:
                return True  # ``import subprocess``, ``from tests.p2p._procs``, ``.run_process``
            value = scope.get(name)
            if value is None:
                continue
            if isinstance(value, types.ModuleType):
                if value.__name__ in PROCESS_HELPERS:
                    return True
                if _ours(value.__name__, module):  # ``flood.measure``: read what it names
                    for attr in _attributes_of(code, name):
                        inner = getattr(value, attr, None)
                        if getattr(inner, "__module__", None) == value.__name__ and any(
                            _starts_processes(f, seen) for f in _functions_of(inner)
                        ):
                            return True
                continue
            if getattr(value, "__module__", None) in PROCESS_HELPERS:
                return True
            if _ours(getattr(value, "__module__", None), module):
                for inner in _functions_of(value):
                    if _starts_processes(inner, seen):
                        return True
    return False


_CLEAN: set[types.CodeType] = set()
"""Code already read and found to start no process, with everything it names: a test's
reading that finds nothing adds all the code it read (each of it reaches only code that was
read too), so the tests of a module, its parametrisations and fixtures read each function once."""


def _clean(candidates: list[types.FunctionType]) -> bool:
    """Whether none of ``candidates`` starts a process (see :func:`_starts_processes`)."""
    seen: set[types.CodeType] = set()
    if any(_starts_processes(f, seen) for f in candidates):
        return False
    _CLEAN.update(seen)
    return True


def _fixture_functions(item: pytest.Item) -> list[types.FunctionType]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    root = item.config.rootpath
    found = []
    for name in item.fixturenames:
        if name == GUARD:
            continue
        for fixturedef in info.name2fixturedefs.get(name, ()):
            # the project's own fixtures (defined under the root), not pytest's or a plugin's
            try:
                source = inspect.getsourcefile(fixturedef.func)
            except TypeError:
                continue
            path = Path(source).resolve() if source is not None else None
            if path and path.is_relative_to(root) and "site-packages" not in path.parts:
                found.extend(_functions_of(fixturedef.func))
    return found


def _rel(item: pytest.Item) -> str:
    return Path(str(item.path)).resolve().relative_to(ROOT).as_posix()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        rel = _rel(item)
        marks = set(FILE_MARKS.get(rel, ()))
        fn = getattr(item, "function", None)
        candidates = _fixture_functions(item)
        if isinstance(fn, types.FunctionType):
            candidates.insert(0, fn)
        if not _clean(candidates):
            marks.add("process")
        function = item.nodeid.split("[", 1)[0]
        if rel in SLOW or function in SLOW:
            marks.add("slow")
        for mark in sorted(marks):
            item.add_marker(mark)


GUARD = "_only_process_tests_start_processes"


class _ProcessRefused(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def _only_process_tests_start_processes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A test not marked ``process`` may not start a child process (see the module doc)."""
    if request.node.get_closest_marker("process") is not None:
        yield
        return
    tried: list[str] = []
    real_init = subprocess.Popen.__init__

    def refuse(self: subprocess.Popen, args: object, *a: object, **kw: object) -> None:
        tried.append(repr(args))
        self.returncode, self._child_created = None, False  # a tidy half-made Popen
        raise _ProcessRefused(
            f"{request.node.nodeid} starts a child process but is not marked 'process'"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    try:
        yield
    finally:
        monkeypatch.setattr(subprocess.Popen, "__init__", real_init)
    assert not tried, (
        f"this test started a child process ({tried[0]}) but tests/conftest.py did not mark "
        "it 'process': teach PROCESS_HELPERS or FILE_MARKS about what it uses"
    )
