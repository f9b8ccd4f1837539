"""The test tiers of tests/conftest.py: what marks a test ``process``, and the guard that fails
a test which starts a child process without the mark (so ``make check`` never runs one).

Each case runs a small pytest session in process (``pytester``) with a copy of the real
conftest; no child process is started: the guard refuses it, or the test is deselected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()

SOURCE = '''
import importlib
import subprocess
import sys

import pytest


def helper():
    return subprocess.run([sys.executable, "-c", "pass"], timeout=60)


class Runner:
    def go(self):
        return helper()


@pytest.fixture
def spawned():
    return helper()


def test_direct():
    subprocess.run([sys.executable, "-c", "pass"], timeout=60)


def test_through_a_helper():
    helper()


def test_through_a_class():
    Runner().go()


def test_through_a_fixture(spawned):
    pass


def test_trio_style():
    import trio

    trio.run_process


def test_hidden():
    """Starts a child through a name the reading cannot see: only the guard catches it."""
    importlib.import_module("subpro" + "cess").run([sys.executable, "-c", "pass"], timeout=60)


def test_in_process():
    assert sum(range(4)) == 6


def shared():
    return sum(range(4))


def test_a_clean_reading_first():
    """Read first and found clean: ``shared`` is remembered as clean..."""
    assert shared() == 6


def shared_then_a_child():
    shared()
    return helper()


def test_a_clean_part_read_again():
    """...which does not hide the child process of the code that calls it."""
    shared_then_a_child()
'''

PROCESS_TESTS = (
    "test_direct",
    "test_through_a_helper",
    "test_through_a_class",
    "test_through_a_fixture",
    "test_trio_style",
    "test_a_clean_part_read_again",
)


@pytest.fixture
def session(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nmarkers =\n    process: x\n    slow: x\n    netns: x\n    tmux: x\n"
    )
    pytester.makepyfile(test_cases=SOURCE)
    return pytester


def test_every_way_to_a_child_process_that_can_be_read_is_marked(
    session: pytest.Pytester,
) -> None:
    result = session.runpytest_inprocess("--collect-only", "-q", "-m", "process")
    collected = {line.split("::")[1] for line in result.outlines if "::" in line}
    assert collected == set(PROCESS_TESTS)


def test_the_fast_tier_refuses_an_unmarked_child_process(session: pytest.Pytester) -> None:
    result = session.runpytest_inprocess("-q", "-m", "not process")
    # the call fails where the child was refused; the teardown check fails it even if the
    # code under test had swallowed that error
    result.assert_outcomes(passed=2, failed=1, errors=1, deselected=len(PROCESS_TESTS))
    result.stdout.fnmatch_lines(["*test_hidden*starts a child process*not marked 'process'*"])


NET_SOURCE = '''
import importlib
import socket

import trio


def dial():
    with socket.create_connection(("127.0.0.1", 9), timeout=1):
        pass


def test_a_socket():
    with socket.socket():
        pass


def test_through_a_helper():
    dial()


def test_trio_style():
    trio.open_tcp_stream


def test_hidden():
    """Opens a socket through a name the reading cannot see: only the guard catches it."""
    name = "sock" + "et"
    getattr(importlib.import_module(name), name)().close()


def test_a_unix_pair_is_no_network():
    """Trio's own wake-up pair (a Unix socket pair) is allowed anywhere."""
    trio.run(trio.sleep, 0)
    a, b = getattr(importlib.import_module("sock" + "et"), "socketpair")()
    a.close()
    b.close()


def test_pure():
    assert sum(range(4)) == 6
'''

NET_TESTS = ("test_a_socket", "test_through_a_helper", "test_trio_style")


@pytest.fixture
def net_session(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nmarkers =\n    process: x\n    slow: x\n    netns: x\n    tmux: x\n"
        "    net: x\n    beside: x\n"
    )
    pytester.makepyfile(test_net=NET_SOURCE, test_cases=SOURCE)
    return pytester


def test_every_way_to_a_socket_that_can_be_read_is_marked_net(
    net_session: pytest.Pytester,
) -> None:
    result = net_session.runpytest_inprocess("--collect-only", "-q", "-m", "net")
    collected = {line.split("::")[1] for line in result.outlines if "::" in line}
    assert collected == set(NET_TESTS)


def test_beside_is_what_starts_no_process_and_opens_no_socket(
    net_session: pytest.Pytester,
) -> None:
    """``make test`` runs ``-m beside`` and ``-m "not beside"``: together every test, once."""
    beside = net_session.runpytest_inprocess("--collect-only", "-q", "-m", "beside")
    rest = net_session.runpytest_inprocess("--collect-only", "-q", "-m", "not beside")
    every = net_session.runpytest_inprocess("--collect-only", "-q")
    ids = [{line for line in r.outlines if "::" in line} for r in (beside, rest, every)]
    assert not ids[0] & ids[1] and ids[0] | ids[1] == ids[2]
    assert {i.split("::")[1] for i in ids[1]} == set(NET_TESTS) | set(PROCESS_TESTS)


def test_a_test_not_marked_net_may_not_open_a_socket(
    net_session: pytest.Pytester, request: pytest.FixtureRequest
) -> None:
    # the session runs in this process: this test's own guard stands aside for it (the
    # session's copy of the conftest guards its tests)
    ours = next(
        p
        for p in request.config.pluginmanager.get_plugins()
        if getattr(p, "__file__", None) == str(Path(__file__).with_name("conftest.py"))
    )
    watching, ours._SocketWatch.test = ours._SocketWatch.test, None
    try:
        result = net_session.runpytest_inprocess(
            "-q", "-m", "not net and not process", "test_net.py"
        )
    finally:
        ours._SocketWatch.test = watching
    result.assert_outcomes(passed=2, failed=1, errors=1, deselected=len(NET_TESTS))
    result.stdout.fnmatch_lines(["*test_hidden*opens a socket but is not marked 'net'*"])


def test_the_parts_run_every_selected_test_once_whole_files_at_a_time(
    pytester: pytest.Pytester,
) -> None:
    """``--part K/N`` (``make test`` runs parts side by side): the N parts of a selection are
    disjoint, together they are the selection, a file is never split between parts, and a
    heavy file does not share a part with everything else."""
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nmarkers =\n    process: x\n    slow: x\n    netns: x\n    tmux: x\n"
    )
    for i in range(7):
        tests = "\n".join(f"def test_{j}():\n    pass\n" for j in range(i + 1))
        pytester.makepyfile(**{f"test_file{i}": tests})

    def ids(*args: str) -> set[str]:
        result = pytester.runpytest_inprocess("--collect-only", "-q", *args)
        return {line for line in result.outlines if "::" in line}

    every = ids()
    parts = [ids("--part", f"{k}/3") for k in (1, 2, 3)]
    assert len(every) == 28 and set().union(*parts) == every
    assert sum(len(p) for p in parts) == len(every)  # disjoint
    files = [{i.split("::")[0] for i in p} for p in parts]
    assert all(files) and not (files[0] & files[1] or files[0] & files[2] or files[1] & files[2])
    assert max(len(p) for p in parts) <= 10  # 28 tests of 1..7 a file: 10, 9, 9
    assert ids("-k", "test_0", "--part", "1/2") | ids("-k", "test_0", "--part", "2/2") == ids(
        "-k", "test_0"
    )
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--part", "3/2")
    assert result.ret != 0
    assert "--part '3/2': K must be between 1 and N" in "\n".join(result.errlines)
