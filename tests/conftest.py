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

* ``net``: the test opens an internet socket (TCP links, zeroconf), found by the same
  reading with :data:`NET_HELPERS` and :data:`NET_CALLS`.
* ``beside``: pure computation (neither ``process`` nor ``net``; the engine's and crypto's
  tests by folder, :data:`BESIDE_FOLDERS`). ``make test`` runs ``-m beside`` in a second
  pytest process beside ``-m "not beside"`` (which waits on peers much of the time); the
  two selections are complements, so every test runs once.

``make check`` deselects ``process`` and ``slow``; ``make test`` (CI) runs everything.

The classification is enforced, not trusted: a test that is not marked ``process``
and starts a child process anyway fails (``subprocess.Popen`` is refused for it), and a
test marked neither ``net`` nor ``process`` that opens an internet socket fails (an audit
hook refuses it), so the fast tier can never quietly grow a child process, the pure run
never waits on a socket, and a miss here shows up in CI.
"""

from __future__ import annotations

import dis
import functools
import importlib
import inspect
import socket
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import ifaddr  # noqa: F401
import pytest

# ifaddr (zeroconf's, and cli.args's for --interface) runs `ldconfig -p` as it is imported
# (ctypes.util.find_library): imported here once, so that a test whose code imports it
# late (zeroconf is imported only when a lobby starts) starts no child process for it

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

NET_HELPERS = frozenset({"socket", "zeroconf", "p2p.net.mesh", "p2p.net.discovery"})
"""Modules whose use means a socket of the internet families: the standard one, zeroconf,
and the project's two modules that open them (the mesh's TCP links, the lobby's mDNS); a
test that runs a ``Node``, a watcher or a lobby reaches them through the code it names."""

NET_CALLS = frozenset(
    {"open_tcp_stream", "open_tcp_listeners", "serve_tcp", "create_connection", "getaddrinfo"}
)
"""Calls that open a TCP socket (or look a name up) from elsewhere (Trio's, asyncio's).
:mod:`p2p.net.netguard` is not read: it names sockets only to watch them."""

BESIDE_FOLDERS = ("tests/engine/", "tests/crypto/")
"""The engine's and crypto's tests: pure computation by the layering rule (engine/ and
crypto/ do no I/O), so they all run beside the rest, whatever else they are marked."""

SLOW_BESIDE = frozenset(
    {
        "tests/p2p/test_late_lies.py",
        "tests/p2p/test_survive.py",
        "tests/p2p/test_open_hands.py",
        "tests/test_bench_adversary.py",
        "tests/p2p/test_spectator.py",
        "tests/p2p/test_verify_fuzz.py",
        "tests/p2p/test_offload.py",
        "tests/p2p/test_survive_privacy.py",
        "tests/p2p/test_game_privacy.py",
        "tests/p2p/test_local_table.py",
    }
)
"""Files whose slow in-process tests run beside the rest too; the other slow in-process
tests (whole tables played in one process: pure computation as well) stay in the main run.
This only balances ``make test``'s two runs (the engine's and crypto's slow tests are
beside already): both end about together. Move a file across when ``--durations`` of the
two runs says they drifted apart.  ``tests/p2p/test_gift.py`` stays: its shared honest
table is read by a process test too, and would be played once in each run."""

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
    "tests/p2p/test_shuffle_ahead.py": "two-deal Slave matches of real nodes, proposals awaited",
    "tests/p2p/test_shuffle_ahead_attacks.py": (
        "whole two-deal tables, in process and of real nodes, each with a cheating shuffler"
    ),
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
        "a whole Slaiga game for each kind of lie, every proof checked, until the lie is shown"
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
    "tests/test_bench_adversary.py::test_forked_games_run_to_their_conclusion_in_child_processes": (
        "seeded adversary tables whose deviating games run in forked child processes"
    ),
    "tests/test_bench_adversary.py::test_a_withheld_entry_that_reaches_every_seat_goes_on_as_the_parent_game": (
        "seeded adversary tables played until a withheld entry reaches every seat"
    ),
    "tests/p2p/test_open_hands.py::test_a_colluding_junk_gift_is_exposed_by_the_opened_hands": (
        "a colluding Slave table played to its end, every proof checked"
    ),
    "tests/p2p/test_open_hands.py::test_without_the_option_the_colluding_gift_stays_a_caveat": (
        "a colluding Slave table played to its end, every proof checked"
    ),
    "tests/p2p/test_gift.py": (
        "each cheat's test plays its own Slave table, every proof checked, to the second "
        "deal's exchange; the others share one honest four-deal table"
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


def _modules_by_name(value: object) -> list[types.ModuleType]:
    """The project's modules a table names as strings, to be imported when one is chosen
    (``cli.main.COMMANDS``: command -> module): what such a table leads to is read as if
    the modules were named directly, since any of them may run."""
    if not isinstance(value, dict) or not value:
        return []
    names = list(value.values())
    if not all(
        isinstance(n, str)
        and "." in n
        and n.split(".", 1)[0] in PROJECT
        and n.isascii()
        and all(part.isidentifier() for part in n.split("."))
        for n in names
    ):
        return []
    try:
        return [importlib.import_module(n) for n in sorted(set(names))]
    except ImportError:
        return []


def _ours(module_name: str | None, home: str) -> bool:
    """A module of this project (a package of :data:`PROJECT`, or the test's own module)."""
    return module_name is not None and (
        module_name == home or module_name.split(".", 1)[0] in PROJECT
    )


@functools.cache
def _named(module_name: str | None, helpers: frozenset[str]) -> bool:
    """``module_name`` is one of ``helpers`` or inside one (``zeroconf._core``)."""
    return module_name is not None and any(
        module_name == h or module_name.startswith(h + ".") for h in helpers
    )


class _Reading:
    """Which tests reach code of ``helpers`` (modules) or call one of ``calls``."""

    def __init__(
        self, helpers: frozenset[str], calls: frozenset[str], unread: frozenset[str] = frozenset()
    ) -> None:
        self.helpers = helpers
        self.calls = calls
        self.unread = unread
        """Modules of this project not read: they reach ``helpers`` only to guard them."""
        self.clean: set[types.CodeType] = set()
        """Code already read and found to reach nothing, with everything it names: a
        test's reading that finds nothing adds all the code it read (each of it reaches
        only code that was read too), so the tests of a module, its parametrisations and
        fixtures read each function once."""
        self.found: set[types.CodeType] = set()
        """Functions' code found to reach a helper: every test that names one reaches it."""

    def reaches(self, fn: types.FunctionType, seen: set[types.CodeType]) -> bool:
        """Whether ``fn`` reaches a helper (:meth:`_reads`), remembered when it does."""
        if fn.__code__ in self.found:
            return True
        if self._reads(fn, seen):
            self.found.add(fn.__code__)
            return True
        return False

    def _reads(self, fn: types.FunctionType, seen: set[types.CodeType]) -> bool:
        """Whether ``fn``, or a function or class of this project that it names (in its
        own module, or as ``module.name`` of a project module), uses a module from
        ``helpers`` (as a module, or through a name imported from one; ``import``
        statements inside functions count too) or calls one of ``calls``."""
        module = fn.__module__
        scope = fn.__globals__
        for code in _code_objects(fn.__code__):
            if code in seen or code in self.clean:
                continue
            seen.add(code)
            for name in code.co_names:
                if name in self.calls or _named(name, self.helpers):
                    return (
                        True  # ``import subprocess``, ``from tests.p2p._procs``, ``.run_process``
                    )
                value = scope.get(name)
                if value is None or _named(getattr(value, "__module__", None), self.unread):
                    continue
                for by_name in _modules_by_name(value):
                    if _named(by_name.__name__, self.helpers):
                        return True
                    for inner in vars(by_name).values():
                        if getattr(inner, "__module__", None) == by_name.__name__ and any(
                            self.reaches(f, seen) for f in _functions_of(inner)
                        ):
                            return True
                if isinstance(value, types.ModuleType):
                    if value.__name__ in self.unread:
                        continue
                    if _named(value.__name__, self.helpers):
                        return True
                    if _ours(value.__name__, module):  # ``flood.measure``: read what it names
                        for attr in _attributes_of(code, name):
                            inner = getattr(value, attr, None)
                            if getattr(inner, "__module__", None) == value.__name__ and any(
                                self.reaches(f, seen) for f in _functions_of(inner)
                            ):
                                return True
                    continue
                if _named(getattr(value, "__module__", None), self.helpers):
                    return True
                if _ours(getattr(value, "__module__", None), module):
                    for inner in _functions_of(value):
                        if self.reaches(inner, seen):
                            return True
        return False

    def finds_nothing(self, candidates: list[types.FunctionType]) -> bool:
        """Whether none of ``candidates`` reaches a helper (see :meth:`reaches`)."""
        seen: set[types.CodeType] = set()
        if any(self.reaches(f, seen) for f in candidates):
            return False
        self.clean.update(seen)
        return True


_PROCESSES = _Reading(PROCESS_HELPERS, PROCESS_CALLS)
_SOCKETS = _Reading(NET_HELPERS, NET_CALLS, frozenset({"p2p.net.netguard"}))


def _fixture_functions(item: pytest.Item) -> list[types.FunctionType]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    root = item.config.rootpath
    found = []
    for name in item.fixturenames:
        if name in GUARDS:
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
        if not _PROCESSES.finds_nothing(candidates):
            marks.add("process")
        if not _SOCKETS.finds_nothing(candidates):
            marks.add("net")
        function = item.nodeid.split("[", 1)[0]
        if rel in SLOW or function in SLOW:
            marks.add("slow")
        pure = not marks & {"process", "net"}
        if rel.startswith(BESIDE_FOLDERS) or (pure and ("slow" not in marks or rel in SLOW_BESIDE)):
            marks.add("beside")
        for mark in sorted(marks):
            item.add_marker(mark)


PART_WEIGHTS = {
    "tests/p2p/test_cheats_procs.py": 180,
    "tests/p2p/test_game_net.py": 110,
    "tests/p2p/test_gift.py": 95,
    "tests/engine/test_slaiga_random.py": 74,
    "tests/p2p/test_survive_procs.py": 72,
    "tests/engine/test_aight.py": 47,
    "tests/test_bench_adversary.py": 46,
    "tests/cli/test_tmux.py": 42,
    "tests/p2p/test_netns.py": 40,
    "tests/p2p/test_open_hands.py": 40,
    "tests/p2p/test_shuffle_ahead_attacks.py": 40,
    "tests/p2p/test_spectator.py": 37,
    "tests/p2p/test_watch_procs.py": 31,
    "tests/p2p/test_game_privacy.py": 29,
    "tests/crypto/test_bench_crypto.py": 28,
    "tests/engine/test_slajens.py": 28,
    "tests/test_bench_soak.py": 27,
    "tests/p2p/test_game_resume.py": 24,
    "tests/p2p/test_offload.py": 24,
    "tests/cli/test_replay.py": 22,
    "tests/crypto/test_shuffle.py": 19,
    "tests/p2p/test_pause.py": 19,
    "tests/p2p/test_shuffle_background.py": 19,
    "tests/engine/test_leave.py": 18,
    "tests/p2p/test_shuffle_ahead.py": 18,
    "tests/test_bench_table.py": 17,
    "tests/engine/test_aight_rules.py": 16,
    "tests/cli/test_verify_several.py": 14,
    "tests/p2p/test_verify_fuzz.py": 14,
    "tests/p2p/test_cheat_words.py": 13,
    "tests/cli/test_moves.py": 11,
    "tests/p2p/test_survive_privacy.py": 11,
    "tests/engine/test_slave.py": 10,
    "tests/p2p/test_local_table.py": 10,
    "tests/p2p/test_node_loopback.py": 9,
    "tests/p2p/test_record_format.py": 8,
    "tests/cli/test_ctrl_c.py": 7,
    "tests/cli/test_play_net.py": 7,
    "tests/crypto/test_hand_proofs.py": 6,
    "tests/p2p/test_fuzz.py": 6,
    "tests/p2p/test_endvote.py": 5,
    "tests/p2p/test_vanished.py": 5,
    "tests/crypto/test_vectors.py": 4,
    "tests/engine/test_baseline.py": 4,
    "tests/p2p/test_survive.py": 4,
}
"""Seconds each of the longest files took in ``make test`` (``--durations``, summed per
file, on the 2-core machine with its four runs going; the four largest raised by hand
where one run's 25 slowest left some of a file's tests out), to balance ``--part``; any other
file counts :data:`PART_DEFAULT_S` a test.  Stale figures only unbalance the parts: every
selected test still runs, in exactly one part."""

PART_DEFAULT_S = 0.3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--part",
        default=None,
        metavar="K/N",
        help="run only part K (1..N) of N of the selected tests, whole files at a time, "
        "balanced by PART_WEIGHTS; the N parts together run every selected test once "
        "(make test runs its parts side by side)",
    )


def _part(option: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in option.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--part {option!r}: expected K/N, such as 1/2") from None
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--part {option!r}: K must be between 1 and N")
    return k, n


def parts_of(files: dict[str, int], n: int) -> list[set[str]]:
    """Split files (path -> number of selected tests) into ``n`` parts of about equal
    weight: the heaviest first, each into the lightest part so far (ties: the first)."""

    def weight(path: str) -> float:
        return PART_WEIGHTS.get(path, PART_DEFAULT_S * files[path])

    parts: list[set[str]] = [set() for _ in range(n)]
    loads = [0.0] * n
    for path in sorted(files, key=lambda p: (-weight(p), p)):
        i = loads.index(min(loads))
        parts[i].add(path)
        loads[i] += weight(path)
    return parts


class _OnePart:
    """Deselects every test outside this run's part, after the markers' own selection."""

    def __init__(self, k: int, n: int) -> None:
        self.k, self.n = k, n

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        files: dict[str, int] = {}
        for item in items:
            files[_rel(item)] = files.get(_rel(item), 0) + 1
        mine = parts_of(files, self.n)[self.k - 1]
        keep = [item for item in items if _rel(item) in mine]
        dropped = [item for item in items if _rel(item) not in mine]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--part")
    if option:
        config.pluginmanager.register(_OnePart(*_part(option)), "slaiga-part")


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


SOCKET_GUARD = "_only_net_tests_open_sockets"
GUARDS = frozenset({GUARD, SOCKET_GUARD, "loopback_only"})
"""The guards' own fixtures (tests/p2p/conftest.py's ``loopback_only`` arms the network
guard): they start no process and open no socket, so the readings skip them."""


class _SocketRefused(PermissionError):
    pass


class _SocketWatch:
    """While ``test`` is set, an internet socket made by a thread other than those in
    ``earlier`` (the threads alive before the test began, such as a previous test's
    lingering zeroconf thread) is refused and noted in ``tried``."""

    test: str | None = None
    earlier: frozenset[int] = frozenset()
    tried: list[str] = []


def _audit(event: str, args: tuple) -> None:  # type: ignore[type-arg]
    if event != "socket.__new__" or _SocketWatch.test is None:
        return
    family = args[1]
    if family in (socket.AF_INET, socket.AF_INET6) and (
        threading.get_ident() not in _SocketWatch.earlier
    ):
        _SocketWatch.tried.append(f"a socket of family {socket.AddressFamily(family).name}")
        raise _SocketRefused(f"{_SocketWatch.test} opens a socket but is not marked 'net'")


sys.addaudithook(_audit)  # an audit hook stays for the process; _SocketWatch.test arms it


@pytest.fixture(autouse=True)
def _only_net_tests_open_sockets(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked neither ``net`` nor ``process`` may not open an internet socket: it
    runs beside the rest in ``make test`` as pure computation (see the module doc)."""
    node = request.node
    if node.get_closest_marker("net") or node.get_closest_marker("process"):
        yield
        return
    main = threading.main_thread().ident
    _SocketWatch.earlier = frozenset(t.ident for t in threading.enumerate() if t.ident != main)
    _SocketWatch.tried = []
    _SocketWatch.test = node.nodeid
    try:
        yield
    finally:
        _SocketWatch.test = None
    tried = _SocketWatch.tried
    assert not tried, (
        f"this test opened {tried[0]} but tests/conftest.py did not mark it 'net': teach "
        "NET_HELPERS or NET_CALLS about what it uses"
    )
