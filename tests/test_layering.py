"""The import arrows of docs/design.md, checked on the source tree.

engine imports nothing of ours, crypto imports nothing of ours, p2p may use
engine and crypto, and only cli sits on top. engine and crypto do no I/O, so
they must not import sockets, clocks, threads or event loops.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"engine", "crypto", "p2p", "cli", "bench"}
ALLOWED = {
    "engine": {"engine"},
    "crypto": {"crypto"},
    "p2p": {"p2p", "engine", "crypto"},
    "cli": OURS,
    "bench": OURS,
}
NO_IO = {"socket", "time", "threading", "asyncio", "trio", "subprocess", "zeroconf", "select"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_import_arrows(package):
    for path in sources(package):
        bad = (imports_of(path) & OURS) - ALLOWED[package]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)} against docs/design.md"


@pytest.mark.parametrize("package", ["engine", "crypto"])
def test_pure_packages_do_no_io(package):
    for path in sources(package):
        bad = imports_of(path) & NO_IO
        assert not bad, f"{path.relative_to(ROOT)} imports I/O modules {sorted(bad)}"


ENGINE_CORE = {
    "engine",
    "engine.cards",
    "engine.codec",
    "engine.errors",
    "engine.game",
    "engine.obligations",
    "engine.options",
    "engine.players",
    "engine.registry",
    "engine.runner",
    "engine.dealer",
    "engine.bots",
}


def test_p2p_imports_no_game_module():
    """p2p reaches games only through the registry and the proof shapes of
    engine.obligations, so a new game (and its statements) needs no change in p2p."""
    for path in sources("p2p"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] == "engine":
                    assert name in ENGINE_CORE, f"{path.relative_to(ROOT)} imports {name}"


def full_imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("layer", ["wire", "record", "table"])
def test_p2p_core_layers_do_no_io_and_never_reach_up_into_the_shell(layer):
    """p2p's layers (docs/design.md): wire, record and table are sans-I/O; only net (the
    Trio shell) moves bytes and timers.  A core layer importing the shell would pull
    policy into it again."""
    for path in sources(f"p2p/{layer}"):
        names = full_imports_of(path)
        io = {n.split(".")[0] for n in names} & NO_IO
        assert not io, f"{path.relative_to(ROOT)} imports I/O modules {sorted(io)}"
        up = sorted(n for n in names if n == "p2p.net" or n.startswith("p2p.net."))
        assert not up, f"{path.relative_to(ROOT)} imports the shell: {up}"


def test_session_topics_never_import_the_session():
    """The table session is one module per concern (docs/design.md): ``core`` routes events
    to the topics, and a topic never reaches back into the session (nor the package, which
    re-exports it); what a topic needs of another topic or of the session is handed to it.
    ``context`` and ``messages``, which every topic shares, import no topic."""
    folder = ROOT / "p2p" / "table" / "session"
    session = {"p2p.table.session", "p2p.table.session.core"}
    for path in sorted(folder.glob("*.py")):
        if path.stem in {"__init__", "core"}:
            continue
        names = full_imports_of(path)
        back = sorted(names & session)
        assert not back, f"{path.relative_to(ROOT)} imports the session: {back}"
        if path.stem in {"context", "messages"}:
            topics = sorted(n for n in names if n.startswith("p2p.table.session."))
            assert not topics, f"{path.relative_to(ROOT)} imports topics: {topics}"


RECORD_WRITES = {
    "append",
    "append_vote",
    "append_notice",
    "close_with_votes",
    "sync",
    "flush",
    "fsync_written",
}


def test_only_durable_writes_the_running_tables_record_file():
    """Our own entries leave only once on disk (p2p/net/durable.py, docs/design.md): every
    write of the record file goes through ``Durable``, which holds the sends behind an own
    entry until it is fsynced.  A write or fsync of the ``store`` elsewhere in the shell
    would let a send overtake the fsync, or leave the held sends waiting."""
    found = []
    for path in sorted((ROOT / "p2p" / "net").glob("*.py")):
        if path.stem == "durable":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = node.func.value
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "store" and node.func.attr in RECORD_WRITES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} store.{node.func.attr}")
    assert not found, f"the record file written outside p2p/net/durable.py: {found}"
