"""The ``open_hands`` table option (issue 20): hands opened after the game.

Every seat's real protocol code in one process (``p2p.table.local_table``).  With the
option on, every seat shows its key share in a signed ``open`` entry after ``final``;
``slaiga verify`` then opens every card ever dealt, agrees with what each seat saw, and
re-checks publicly the Slave gifts that only their receiver could check.  A seat that
withholds its ``open`` entry is silent, never a cheat; a false key share convicts it.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.net import table_options
from crypto.group import L, random_scalar, scalar_from_bytes, scalar_to_bytes
from engine import registry
from engine.cards import ORDERS
from engine.games.slave.actions import Give
from engine.games.slave.rules import Slave
from p2p.errors import InvalidMove, LocalProtocolError, TableAbandoned
from p2p.record.chain import Record
from p2p.record.verify import verify_record_file
from p2p.table import local_table
from p2p.table.forming import open_genesis
from p2p.table.game_rule import (
    FINAL_KIND,
    OPEN_KIND,
    OPEN_SHARE_KIND,
    SEALED_KIND,
    SeatKeys,
    VerdictBody,
)
from p2p.table.game_rule import gift as gift_module
from p2p.table.game_rule.open import opened_hands
from p2p.table.seat import SeatDriver, game_of, rule_factory
from p2p.table.silence import SilenceMonitor
from p2p.table.spectator import Spectator
from p2p.wire import decode_body
from tests.p2p._tables import write_seat_record
from tests.p2p.cheaters import Cheater, force_signing, make_bot

REPO = Path(__file__).resolve().parents[2]


def _kinds(table: local_table.LocalTable) -> list[str]:
    return [decode_body(s.entry).body.TAG for s in table.log]


def _verify_json(path: Path) -> tuple[int, dict]:
    out = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    return out.returncode, json.loads(out.stdout)


# ---- the option on: every card opened, and it agrees with each seat's own view ----------


@pytest.mark.parametrize(
    ("game", "seats", "options"), [("slave", 4, {"games": 2}), ("slaiga", 3, {})]
)
def test_an_opened_record_shows_every_hand_as_each_seat_saw_it(game, seats, options, tmp_path):
    dealt: dict[int, dict[int, set[str]]] = {}  # slot -> deal number -> faces its seat held

    def on_entry(t: local_table.LocalTable) -> None:
        for d in t.drivers:
            g = game_of(d.record)
            if g is None or g.mine is None or not g.deals or g.deals[-1].hands is None:
                continue
            seen = dealt.setdefault(d.slot, {})
            k = len(g.deals)
            if k not in seen:  # the seat's own view of its hand, as dealt
                own = g.mine.engine
                seen[k] = {own.faces[h].code for h in own.zones[f"hand:{g.mine.seat}"]}

    table = local_table.new_table(game, seats, {**options, "open_hands": True})
    local_table.run(table, on_entry=on_entry)
    assert not table.cheats
    kinds = _kinds(table)
    assert kinds[-seats:] == [OPEN_KIND] * seats  # the last round, after final
    assert kinds[-2 * seats : -seats] == [FINAL_KIND] * seats
    g = game_of(table.drivers[0].record)
    assert g is not None and g.opened is not None
    deals = opened_hands(g)
    assert len(deals) == len(dealt[0]) >= 1
    for d in table.drivers:
        seat = game_of(d.record).mine.seat
        for k, faces in dealt[d.slot].items():
            assert set(deals[k - 1]["hands"][seat]) == faces, (d.slot, k)
    # every deal opens to the whole deck, each card once
    whole = sorted(g._face(k).code for k in range(g.size))
    for d in deals:
        assert sorted(d["deck"]) == whole
    path = write_seat_record(table, 1, tmp_path / "t.rec")
    report = verify_record_file(path)
    assert report.ok and report.finished, report.failure
    assert report.opened is not None
    assert [x["hands"] for x in report.opened.deals] == [x["hands"] for x in deals]
    assert report.caveats == ()  # a gift's check is public now, not one seat's
    code, data = _verify_json(path)
    assert code == 0
    assert [{int(s): c for s, c in x["hands"].items()} for x in data["opened"]["deals"]] == [
        x["hands"] for x in deals
    ]
    human = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert human.returncode == 0, human.stderr
    assert "hands opened after the game" in human.stdout
    first = deals[0]["hands"][0]
    assert " ".join(first) in human.stdout
    if game == "slave":
        gifts = [decode_body(s.entry) for s in table.log]
        gifts = [e for e in gifts if e.body.TAG == SEALED_KIND]
        assert len(gifts) == 2
        assert len(data["opened"]["public_checks"]) == 2
        assert all("giver's highest" in m for m in data["opened"]["public_checks"])
        for c in g.gift_checks:
            key = ORDERS["slave"]
            assert c.ok
            assert max(map(key, c.rest)) < min(map(key, c.given))


def test_a_spectator_shows_the_hands_once_opened_and_not_before():
    table = local_table.new_table("high-card", 3, {"open_hands": True})
    follower = Spectator(table.genesis)
    seen_before: list[list] = []

    def on_entry(t: local_table.LocalTable) -> None:
        follower.offer(t.log[-1])
        if decode_body(t.log[-1].entry).body.TAG != OPEN_KIND:
            seen_before.append(follower.opened_hands())

    local_table.run(table, on_entry=on_entry)
    assert not table.cheats and follower.finished and follower.verdict is None
    assert all(x == [] for x in seen_before)  # nothing readable before every key is out
    seat = game_of(table.drivers[0].record)
    assert follower.opened_hands() == opened_hands(seat) != []


# ---- the option off: nothing changes -------------------------------------------------------


def test_the_option_off_leaves_the_manifest_and_the_record_as_before():
    """A table without the option signs the manifest it signed before the option
    existed (no ``open_hands`` key) and its record ends with ``final``."""
    assert "open_hands" not in table_options("slave", 4, [])
    assert table_options("slave", 4, ["open_hands=on"])["open_hands"] is True
    genesis, _, _ = local_table.game_genesis("high-card", 2)
    manifest = open_genesis(genesis)
    assert "open_hands" not in dict(manifest.options)
    assert dict(manifest.options)["survive"] is False
    table = local_table.run(local_table.new_table("high-card", 2))
    assert not table.cheats
    assert _kinds(table)[-2:] == [FINAL_KIND, FINAL_KIND]
    assert OPEN_KIND not in _kinds(table)
    g = game_of(table.drivers[0].record)
    assert g is not None and g.opened is None and g.deals == []


# ---- a seat that withholds its key: silent, never a cheat --------------------------------


def test_a_withheld_open_entry_names_the_seat_as_silent(tmp_path):
    table = local_table.new_table("high-card", 3, {"open_hands": True})
    quiet = table.drivers[2]
    honest_next = quiet.next_body

    def withhold(choose):
        if OPEN_KIND in quiet.record.owes(quiet.slot):
            return None
        return honest_next(choose)

    quiet.next_body = withhold
    with pytest.raises(LocalProtocolError, match="stuck"):
        local_table.run(table)
    assert not table.cheats
    rec = table.records[0]
    assert set(rec.waiting_on()) == {2}
    monitor = SilenceMonitor.from_manifest(rec.manifest)
    monitor.update(0.0, rec.step, frozenset(rec.waiting_on()))
    with pytest.raises(TableAbandoned) as ei:
        monitor.update(monitor.max_wait + 1, rec.step, frozenset(rec.waiting_on()))
    assert ei.value.seat == 2
    report = verify_record_file(write_seat_record(table, 0, tmp_path / "t.rec"))
    assert report.failure is not None and report.failure.kind == "Unfinished"
    assert report.failure.culprit is None
    assert "silent, not a cheat" in report.failure.message
    assert report.ranking is not None  # the result was signed by everyone
    assert report.opened is None


# ---- a false key share: convicted, each way it can be false ---------------------------------


def _cheat_table(game: str, seats: int, options: dict, cheats: dict) -> local_table.LocalTable:
    """A table whose seats in ``cheats`` carry that test hook and sign whatever it makes."""
    genesis, ids, seals = local_table.game_genesis(game, seats, options)
    drivers = []
    for slot in range(seats):
        keys = SeatKeys(slot, ids[slot], seals[slot], bytes([slot + 1]) * 32, cheats.get(slot))
        record = Record(genesis, rule_factory(keys))
        if slot in cheats:
            force_signing(record)
        drivers.append(SeatDriver(record, ids[slot], slot))
    return local_table.LocalTable(genesis, drivers)


class _FalseKey:
    """Shows a false key share in the ``open`` round."""

    def __init__(self, how: str) -> None:
        self.how = how

    def open(self, rule, secret: bytes) -> bytes:
        x = scalar_from_bytes(secret)
        if self.how == "other-scalar":
            return scalar_to_bytes(random_scalar())
        if self.how == "negated":
            return scalar_to_bytes(L - x)
        if self.how == "bit-flip":
            return bytes([secret[0] ^ 1]) + secret[1:]
        if self.how == "zero":
            return bytes(32)
        if self.how == "unreduced":
            return (x + L).to_bytes(32, "little")
        if self.how == "all-ones":
            return b"\xff" * 32
        raise AssertionError(self.how)


@pytest.mark.parametrize(
    "how", ["other-scalar", "negated", "bit-flip", "zero", "unreduced", "all-ones"]
)
def test_a_false_key_share_in_open_is_convicted(how, tmp_path):
    table = _cheat_table("high-card", 3, {"open_hands": True}, {1: _FalseKey(how)})
    local_table.run(table)
    assert table.cheats, how
    assert {exc.seat for exc in table.cheats} == {1}
    assert all(isinstance(exc, InvalidMove) for exc in table.cheats)
    opens = [decode_body(s.entry) for s in table.log]
    step = next(e.step for e in opens if e.body.TAG == OPEN_KIND and e.seat == 1)
    for slot in (0, 2):
        report = verify_record_file(write_seat_record(table, slot, tmp_path / f"s{slot}.rec"))
        assert report.failure is not None, how
        assert report.failure.culprit == 1 and report.failure.step == step, report.failure
        assert report.opened is None


# ---- with survive: the hand of a seat that left opens too, from the escrow ---------------

LOST_AFTER = 20
"""Entries before slot 2 goes silent: past the escrow (3 seats: 15 entries), in the deal."""


def _open_share_steps(table: local_table.LocalTable) -> list[tuple[int, int]]:
    return [
        (e.step, e.seat)
        for e in (decode_body(s.entry) for s in table.log)
        if e.body.TAG == OPEN_SHARE_KIND
    ]


def test_with_survive_the_others_open_the_hand_of_the_seat_that_left(tmp_path):
    """Slot 2 leaves for good; the two others finish, open their own keys, then show their
    escrow shares of slot 2's key (``open-share``): every deal opens to the whole deck,
    which it cannot without slot 2's key share, and the record verifies."""
    table = _cheat_table("high-card", 3, {"survive": True, "open_hands": True}, {})
    local_table.run(table, lost={2: LOST_AFTER})
    assert not table.cheats
    kinds = _kinds(table)
    assert kinds[-4:] == [OPEN_KIND, OPEN_KIND, OPEN_SHARE_KIND, OPEN_SHARE_KIND], kinds[-6:]
    assert sorted(seat for _, seat in _open_share_steps(table)) == [0, 1]
    g = game_of(table.drivers[0].record)
    assert g is not None and g.done and g.gone and g.opened is not None
    lost = g.gone[0]
    assert (
        g.opened == sum(game_of(d.record).mine.secret for d in table.drivers) % L
    )  # slot 2's own key share rebuilt exactly
    whole = sorted(g._face(k).code for k in range(g.size))
    deals = opened_hands(g)
    assert deals and all(sorted(d["deck"]) == whole for d in deals)
    report = verify_record_file(write_seat_record(table, 0, tmp_path / "t.rec"))
    assert report.ok and report.finished, report.failure
    assert report.opened is not None
    assert [x["hands"] for x in report.opened.deals] == [x["hands"] for x in deals]
    assert [a["slot"] for a in report.to_json()["absent"]] == [2]
    assert lost == g.engine_seat_of[2]


class _FalseShare:
    """Shows a false escrow share of the lost seat's key in the ``open-share`` round."""

    def open_share(self, rule, share: bytes) -> bytes:
        return bytes([share[0] ^ 1]) + share[1:]


def test_a_false_shown_share_is_convicted(tmp_path):
    table = _cheat_table("high-card", 3, {"survive": True, "open_hands": True}, {1: _FalseShare()})
    local_table.run(table, lost={2: LOST_AFTER})
    assert {exc.seat for exc in table.cheats} == {1}
    assert all(isinstance(exc, InvalidMove) for exc in table.cheats)
    step = next(k for k, seat in _open_share_steps(table) if seat == 1)
    report = verify_record_file(write_seat_record(table, 0, tmp_path / "s0.rec"))
    assert report.failure is not None and report.opened is None
    assert report.failure.culprit == 1 and report.failure.step == step, report.failure


# ---- a KING and SLAVE in collusion: a junk gift accepted, exposed once the hands open ------


class _Colluder(Cheater):
    """The SLAVE gives its lowest cards with a proof of another statement, and the KING
    (its accomplice) accepts whatever it gets."""

    def verdict(self, rule, honest: VerdictBody) -> VerdictBody | None:
        return VerdictBody(True)


@pytest.fixture
def accomplice(monkeypatch):
    """A colluding receiver's software: it opens the gift box and learns the cards as an
    honest one does, but skips the check that they are the giver's highest."""
    real, real_pre = gift_module._judge_sealed, gift_module._pre_judge

    def colluding(rule) -> bool:
        return rule.mine is not None and isinstance(rule.mine.keys.cheat, _Colluder)

    def pre(rule, gift, b):  # no honest check ahead in a worker thread either
        return None if colluding(rule) else real_pre(rule, gift, b)

    def judge(rule, gift, sealed, judged=None):
        if not colluding(rule):
            return real(rule, gift, sealed, judged)
        with monkeypatch.context() as m:
            m.setattr(gift_module, "verify_none_of", lambda *a, **k: None)
            return real(rule, gift, sealed)

    monkeypatch.setattr(gift_module, "_pre_judge", pre)
    monkeypatch.setattr(gift_module, "_judge_sealed", judge)
    # and the giver's own engine does not stop it giving cards that are not its highest
    exchange = Slave.PHASES["exchange"]
    give = exchange.actions[Give]

    def lax_give(game, action):
        steps = give(game, action)
        with monkeypatch.context() as m:
            m.setattr(Slave, "face_for", lambda self, seat, h: None)
            try:
                ob = next(steps)
            except StopIteration as stop:
                return stop.value
        while True:
            answer = yield ob
            try:
                ob = steps.send(answer)
            except StopIteration as stop:
                return stop.value

    lax = dataclasses.replace(exchange, actions={Give: lax_give})
    monkeypatch.setattr(Slave, "PHASES", {**Slave.PHASES, "exchange": lax})


def _colluding_table(open_hands: bool):
    cheaters = [_Colluder("gift-not-highest") for _ in range(4)]
    options = {"games": 2, "open_hands": open_hands}
    table = _cheat_table("slave", 4, options, dict(enumerate(cheaters)))
    drivers = table.drivers
    spec = registry.get("slave")

    def player(slot: int, seat: int):
        return make_bot(spec, seat, cheaters[slot], lambda: game_of(drivers[slot].record))

    return table, player


def test_a_colluding_junk_gift_is_exposed_by_the_opened_hands(tmp_path, accomplice):
    table, player = _colluding_table(open_hands=True)
    local_table.run(table, make_player=player)
    entries = [decode_body(s.entry) for s in table.log]
    gift = next(e for e in entries if e.body.TAG == SEALED_KIND)
    assert OPEN_KIND in [e.body.TAG for e in entries]  # accepted during the game
    assert table.cheats
    assert {exc.seat for exc in table.cheats} == {gift.seat}
    assert "not its highest" in str(table.cheats[0])
    path = write_seat_record(table, next(s for s in range(4) if s != gift.seat), tmp_path / "t.rec")
    report = verify_record_file(path)
    assert report.failure is not None
    assert report.failure.culprit == gift.seat and report.failure.step == gift.step
    code, data = _verify_json(path)
    assert code != 0 and data["culprit_slot"] == gift.seat
    assert any("was not the giver's highest" in m for m in data["opened"]["public_checks"])


def test_without_the_option_the_colluding_gift_stays_a_caveat(tmp_path, accomplice):
    table, player = _colluding_table(open_hands=False)
    local_table.run(table, make_player=player)
    assert not table.cheats
    report = verify_record_file(write_seat_record(table, 0, tmp_path / "t.rec"))
    assert report.ok and report.opened is None
    assert len(report.caveats) == 2


# ---- slaiga replay on an opened record ---------------------------------------------------------


def test_replay_on_an_opened_record_shows_every_hand(tmp_path):
    from tests.cli._replays import names_in_order, played_record

    path, table = played_record(tmp_path, "slave", 4, {"games": 1, "open_hands": True})
    assert not table.cheats
    run = subprocess.run(
        [sys.executable, "-m", "cli", "replay", str(path), "--plain"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "Hands opened after the game" in out
    deals = opened_hands(game_of(table.records[0]))
    names = names_in_order(table)
    for e, cards in deals[0]["hands"].items():
        assert f"  {e + 1}. {names[e]}: {' '.join(cards)}" in out
    # without the option the public replay shows no hand
    (tmp_path / "off").mkdir()
    plain_path, _ = played_record(tmp_path / "off", "high-card", 2, {})
    off = subprocess.run(
        [sys.executable, "-m", "cli", "replay", str(plain_path), "--plain"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert off.returncode == 0 and "Hands opened" not in off.stdout


@pytest.mark.parametrize("game", registry.names())
def test_slaiga_options_says_what_open_hands_gives_away(game, capsys):
    from cli.main import main

    assert main(["options", game, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    (row,) = [o for o in info["options"] if o["name"] == "open_hands"]
    assert row["default"] is False and row["allowed"] == "on or off"
    assert "read every card ever dealt in this game" in row["help"]
    text = (REPO / "docs" / "rules" / f"{game}.md").read_text(encoding="utf-8")
    assert "anyone who has the game's record can read every card ever dealt" in text


def test_peer_processes_play_the_open_round_over_loopback(tmp_path):
    """The node sends its ``open`` entry by itself (a machine step), and every peer's
    record file opens every hand."""
    from tests.p2p._games import GameTable, verify_all_json

    with GameTable(tmp_path, "high-card", 3, {"open_hands": "on"}) as table:
        outs = table.start().finish(timeout=300)
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
    results = [o.result for o in outs]
    assert len({r["record_head"] for r in results}) == 1
    for code, report in verify_all_json([r["record"] for r in results]):
        assert code == 0 and report["ok"] and report["finished"], report
        assert report["options"]["open_hands"] is True
        (deal,) = report["opened"]["deals"]
        assert sum(len(cards) for cards in deal["hands"].values()) >= 3


def test_slaiga_watch_shows_the_opened_hands_at_the_end(capsys):
    import io

    from cli.watch import Show, _print_end
    from p2p.net.watcher import WatchResult

    table = local_table.run(local_table.new_table("high-card", 3, {"open_hands": True}))
    show = Show(io.StringIO(), "plain")
    follower = Spectator(table.genesis)
    for signed in table.records[0].signed_from(1):
        show.update(follower, follower.offer(signed))
    deals = follower.opened_hands()
    assert deals
    assert _print_end(WatchResult(follower, follower.manifest), show, as_json=False) == 0
    out = capsys.readouterr().out
    assert "hands opened after the game, deal 1:" in out
    for e, cards in deals[0]["hands"].items():
        assert f"  {e + 1}. " in out and " ".join(cards) in out
    assert _print_end(WatchResult(follower, follower.manifest), show, as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert [{int(s): c for s, c in d["hands"].items()} for d in data["opened_hands"]] == [
        d["hands"] for d in deals
    ]
