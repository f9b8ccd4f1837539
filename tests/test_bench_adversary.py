"""``slaiga bench adversary``, short and seeded: tables where one seat deviates.

The whole property of bench/adversary.py is checked on a seeded run of every
game (in process, a few seconds); then each kind of deviation on its own, on
the quickest game; and every deviation the adversary found that a fix closed
is kept here as a seeded regression test.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgpack
import pytest

from bench import adversary, adversary_procs
from p2p.table.game_rule import ACTION_KIND


def _table(tmp: Path, game: str, seats: int, seed: int, kind: str, **kw) -> adversary.Table:
    table = adversary.Table(game, seats, seed, adversary.Circle(), 0.0, kind)
    for name, value in kw.items():
        setattr(table, name, value)
    return table


def _judged(table: adversary.Table, tmp: Path) -> adversary.GameReport:
    table.play()
    assert table.deviation is not None, "the deviation never had its chance"
    return table.judge(tmp, {})


def test_a_seeded_run_holds_the_property(tmp_path):
    # Slåjens: dice only, so its tables take a fraction of a second (the other games'
    # shuffles take seconds each: the bench plays them)
    out = adversary.run_inprocess(games=25, seconds=None, seed=16, only=("slajens",))
    assert out["games"] >= 25
    assert set(out) >= {"games", "deviations", "convicted", "accepted_valid", "silence"}
    assert out["convicted"] > 0
    # every failure the adversary found is fixed: none is allowed, a flipped byte included
    assert out["failures"] == 0, out["samples"]
    for key in ("wrong_blame", "crashes", "hangs", "missed", "refused_valid"):
        assert out[key] == 0, out["samples"]


@pytest.mark.parametrize("kind", ["kind", "replay", "equivocate", "withhold", "stop", "foreign"])
def test_each_kind_holds_the_property(tmp_path, kind):
    circle = adversary.Circle()
    if kind == "foreign":
        # an earlier table of the same players, whose entries the deviator resends
        first = adversary.play_one(900, circle, tmp_path, {}, 0.0, game="slajens", kind="stop")
        assert first
    for seed in range(3):
        table = adversary.Table("slajens", 3, 1000 + seed, circle, 0.0, kind)
        table.deviate_at = 1 + seed
        report = _judged(table, tmp_path)
        assert report.failures == [], report
        expected = {
            "kind": {"convicted"},
            "replay": {"convicted", "accepted_valid"},
            "equivocate": {"convicted"},
            "withhold": {"accepted_valid"},
            "stop": {"silence"},
            "foreign": {"accepted_valid"},
        }[kind]
        assert report.outcome in expected, report


@pytest.mark.parametrize("field", ["seat", "table_id"])
def test_a_changed_entry_field_convicts_or_is_ignored(tmp_path, field):
    table = _table(tmp_path, "slajens", 3, 7, "field", field_only=("entry", field))
    table.deviate_at = 2
    report = _judged(table, tmp_path)
    assert report.failures == [], report
    # another seat's number: impersonation; another table: no evidence, the game goes on
    assert report.outcome == ("convicted" if field == "seat" else "accepted_valid"), report


def test_a_changed_body_field_convicts_its_signer(tmp_path):
    rng = random.Random(5)
    for seed in range(4):
        table = _table(tmp_path, "slajens", 3, 40 + seed, "field", field_only=("body", None))
        table.deviate_at = rng.randrange(1, 6)
        table.field_only = None
        table.kind = "raw"
        report = _judged(table, tmp_path)
        assert report.failures == [], report


def test_an_entry_with_an_unknown_prev_convicts_its_signer(tmp_path):
    """Found by bench adversary: an entry for the current step chaining to an unknown hash
    was refused as a chain break and kept as no evidence; the seat then signed its real
    entry for that step and nobody convicted it.  Two entries for one step are
    equivocation, whichever chain each names."""
    # a random hash, not an older one of this record (that is a Replay, and convicts)
    table = _table(
        tmp_path, "slajens", 3, 3, "field", field_only=("entry", "prev"), prev_old_share=0.0
    )
    table.deviate_at = 2
    report = _judged(table, tmp_path)
    assert report.outcome == "convicted" and report.failures == [], report


def test_an_entry_for_a_later_step_convicts_with_evidence(tmp_path):
    """Found by bench adversary: an entry for a later step, held and refused at its step,
    convicted its author at the seats it was shown to, which then stopped; a seat it was
    not shown to waited on them (about 1 table in 6).  The refused entry is now relayed
    with the evidence (p2p/table/session/blame.py, ``keep_evidence``), so every seat convicts."""
    for seed in range(8):
        table = _table(
            tmp_path,
            "slajens",
            4,
            500 + seed,
            "field",
            field_only=("entry", "step"),
            step_shifts=(1, 2),
        )
        table.deviate_at = 1 + seed % 5
        report = _judged(table, tmp_path)
        assert report.outcome == "convicted" and report.failures == [], report


def test_a_lie_convicts_the_liar(tmp_path):
    # a face-down claim the table accepts, shown false by a later reveal
    table = adversary.Table("slaiga", 3, 70, adversary.Circle(), 0.0, "lie")
    table.deviate_at = 2
    report = _judged(table, tmp_path)
    assert report.outcome == "convicted" and report.failures == [], report


def test_the_memo_checks_every_changed_byte_for_real():
    """The bench's memo (bench/memo.py) skips a shuffle statement only when every byte of
    it passed a real check before: a proof, pile or context changed anywhere is checked,
    and refused every time; a point encoding is validated the first time it is seen."""
    import dataclasses as dc

    from bench.memo import Memo, memo
    from crypto import shuffle_proof_tw_batch as tb
    from crypto.errors import CryptoError
    from crypto.group import Point
    from crypto.transcript import Context
    from tests.crypto.test_shuffle_batch import _chain

    _, (st,) = _chain(4, 1)
    wrong_ctx = dc.replace(st, context=Context(b"table-under-test", 3, 8, 0))
    wrong_proof = dc.replace(st, proof=dc.replace(st.proof, s1=(st.proof.s1 + 1)))
    wrong_pile = dc.replace(st, outputs=(st.outputs[1], st.outputs[0], *st.outputs[2:]))
    with memo(Memo()) as m:
        for _ in range(2):
            tb.verify_shuffles_batch([st])
        assert (m.checked, m.hits) == (1, 1)
        for bad in (wrong_ctx, wrong_proof, wrong_pile):
            for _ in range(2):
                with pytest.raises(CryptoError):
                    tb.verify_shuffles_batch([st, bad])
        assert m.checked == 1 + 6 and m.hits == 1 + 6
        good = st.joint_key.data
        assert Point.decode(good) == Point.decode(good) and m.point_hits == 1
        flipped = bytes([good[0] ^ 1]) + good[1:]
        for _ in range(2):
            with pytest.raises(CryptoError):
                Point.decode(flipped)
    assert m.point_hits == 1
    assert tb._verify_batch.__module__ == "crypto.shuffle_proof_tw_batch"  # uninstalled


def test_a_table_seed_replays_the_whole_game(tmp_path):
    """Seeds fix the whole game, deal included: a failure's seed replays it exactly."""
    from bench.memo import memo, seeded

    logs = []
    for _ in range(2):
        seed = adversary.table_seed(16, 3)
        with memo(), seeded(seed):
            table = adversary.Table("slajens", 3, seed, adversary.circle_for(seed), 0.0, "withhold")
            table.play()
        logs.append([(s.entry, s.signature) for s in table.log])
        adversary._CIRCLES.clear()
    assert logs[0] == logs[1] and len(logs[0]) > 20


def test_forked_games_run_to_their_conclusion_in_child_processes(tmp_path):
    """The parent table plays honestly to its end; at the deviator's turns it forks a
    child process per deviating game, which plays that game to its conclusion and judges
    it (every honest seat, slaiga verify on every honest seat's file).  Every kind gets
    its games, none fails, and the parent's own game is checked too."""
    from bench.memo import memo

    seen = set()
    outcomes = set()
    verified: dict = {}
    for i in range(2):
        seed = adversary.table_seed(17, i)
        with memo():
            reports = adversary.play_one(seed, None, tmp_path, verified, 1.0, "slajens", None, 3)
        for report in reports:
            assert report.failures == [], report
            assert report.forked
            seen.add(report.kind)
            outcomes.add(report.outcome)
    assert {"field", "kind", "replay", "withhold", "stop"} <= seen
    assert {"convicted", "accepted_valid", "silence"} <= outcomes
    assert not list(tmp_path.iterdir())  # each child removed the files it verified
    # what the memo spared inside the children counts in the run's figures
    assert verified["__memo__"]["signature_memo_hits"] > 0


def test_a_withheld_entry_that_reaches_every_seat_goes_on_as_the_parent_game(tmp_path, monkeypatch):
    """A forked game whose deviation leaves every seat exactly where the honest entry
    would (a withheld entry, relayed) is the parent's game from there on: it is judged
    with the parent's end, not played again.  (A one-round Slåjens table: every turn of
    the deviator still forks.)"""
    monkeypatch.setitem(adversary.OPTIONS, "slajens", {"rounds": 1})
    seed = adversary.table_seed(18, 0)
    with adversary.seeded(seed):
        table = adversary.Table("slajens", 3, seed, adversary.circle_for(seed), 1.0, None, 1)
        table.tmp_dir = str(tmp_path)
        real = adversary.KINDS
        adversary.KINDS = ("withhold",)
        try:
            table.play()
        finally:
            adversary.KINDS = real
    reports = table.forks + table.judge_parent(tmp_path, {})
    assert table.as_parent and all(r.kind == "withhold" for r in table.as_parent)
    assert all(r.outcome == "accepted_valid" and r.failures == [] for r in reports), reports


def test_a_broken_honest_parent_fails_the_games_that_went_on_as_it():
    """The games that went on as the parent fail with it: an honest table that did not
    end cleanly is a failure of every one of them, and of its own."""
    seed = adversary.table_seed(18, 1)
    with adversary.seeded(seed):
        table = adversary.Table("slajens", 3, seed, adversary.circle_for(seed), 1.0, None, 1)
    table.as_parent = [adversary.GameReport(seed, "slajens", 3, "foreign", "own", "")]
    reports = table.judge_parent(Path("/nonexistent"), {})  # never played: not finished
    assert [r.failures for r in reports] == [["hangs"], ["hangs"]]


def test_an_entry_signed_for_a_closed_step_is_judged_by_verify_as_live(tmp_path):
    """Found by bench adversary's forked games (table seed 285212672): a seat signs an
    entry for the step before its own, chained to the head after it.  Live seats convict
    it as a replay of a closed step; slaiga verify sorted it into that step, before the
    entry closing it, saw a broken chain and named nobody.  Verify now judges an entry
    that chains to a head the file reaches later once the rest is folded."""
    for seed in range(600, 603):
        with adversary.seeded(seed):
            table = _table(
                tmp_path,
                "slajens",
                4,
                seed,
                "field",
                field_only=("entry", "step"),
                step_shifts=(-1,),
            )
            table.deviate_at = 4
            report = _judged(table, tmp_path)
        assert report.outcome == "convicted" and report.failures == [], report


def test_a_valid_resigned_action_is_the_deviators_move(tmp_path):
    """Found by bench adversary (11 of 4,718 games): an older action of the deviator
    re-signed for the current step, still legal, was followed by its honest entry for the
    same step, a real equivocation the bench then counted as a valid entry refused.  A
    valid re-signed action is now the deviator's move (it plays on from it).  Seed 38,
    turn 11 is such a table (found by search; the same under any hash seed)."""
    with adversary.seeded(38):
        table = adversary.Table("slajens", 3, 38, adversary.circle_for(38), 0.0, "replay")
        table.deviate_at = 11
        report = _judged(table, tmp_path)
    assert table.deviation is not None and table.deviation.must_convict is False
    assert report.detail.startswith("re-signed action"), report
    assert report.outcome == "accepted_valid" and report.failures == [], report


def test_twins_over_processes_both_sign_one_step_and_are_convicted(tmp_path):
    """``--procs``, twins: two peer processes run one seat with the same keys and state.
    Each signs its own version of one step (another legal action) before it can hear of
    the other's, both versions go out, and every honest peer convicts the seat of
    equivocation, its file verified alike by ``slaiga verify``."""
    report = adversary_procs.play_game(5, tmp_path, "twin")
    assert report.game == "aight-of-spaides"
    assert report.detail == "raced", report.note  # both twins signed and sent
    assert report.outcome == "convicted", report.note
    assert report.failures == [], report.note


def _illegal(decoder, engine, honest):  # type: ignore[no-untyped-def]
    """Encodings of ``honest`` with one int field changed that decode but ``engine`` refuses."""
    for key, value in honest.items():
        if key == "seat" or type(value) is not int:
            continue
        for other in range(-1, 12):
            raw = msgpack.packb({**honest, key: other})
            try:
                action = decoder.decode_action(msgpack.unpackb(raw, raw=False))
            except Exception:  # noqa: BLE001 - out of the field's range
                continue
            if engine.check(action) is not None:
                yield raw


@pytest.mark.parametrize("change", ["another legal action", "an illegal action", "another seat"])
def test_an_action_changed_in_its_bytes_is_judged_by_the_deviators_engine(
    tmp_path, monkeypatch, change
):
    """Found by bench adversary (table seed 721420289, Honest Slaiga, turn 91): one bit
    flipped in the deviator's action bytes made ``place`` at position 5 into position 4,
    another legal choice.  The bench owed every changed action body a conviction without
    asking the engine, and counted the game, rightly played to its end, as ``missed``.  An
    action changed in its bytes is now judged as a changed action is: owed a conviction if
    it does not decode, names another seat, or the deviator's own engine refuses it."""
    to: dict[str, bytes] = {}
    monkeypatch.setattr(adversary, "_mutate_value", lambda rng, value: (to["bytes"], "bit"))

    class AtAnAction(adversary.Table):
        def _dev_turn(self, d, body):  # type: ignore[no-untyped-def]
            self.deviate_at = adversary.MAX_ENTRIES + 1
            if self.deviation is None and body.TAG == ACTION_KIND:
                engine, seat = d.seat_view()
                honest = msgpack.unpackb(body.action, raw=False)
                if change == "another legal action":
                    legal = [d.game.action_body(a).action for a in engine.legal_actions(seat)]
                    others = [a for a in legal if a != body.action]
                    new = others[0] if others else None
                elif change == "another seat":
                    new = msgpack.packb({**honest, "seat": (seat + 1) % self.n})
                else:  # a field given a value it may hold, but not now
                    new = next(_illegal(d.game.engine, engine, honest), None)
                if new is not None:
                    to["bytes"] = new
                    self.deviate_at = self.turns
            super()._dev_turn(d, body)

    table = AtAnAction("slajens", 3, 7, adversary.Circle(), 0.0, "field")
    table.field_only = ("body", "action")
    report = _judged(table, tmp_path)
    assert table.deviation is not None and table.deviation.detail == "action.action:bit"
    assert table.deviation.must_convict is (change != "another legal action")
    expected = "accepted_valid" if change == "another legal action" else "convicted"
    assert report.outcome == expected and report.failures == [], report


def test_a_replay_of_one_turn_plays_the_runs_games_of_that_turn(tmp_path, monkeypatch):
    """``--replay SEED --turn N``: only the games forked at the deviator's turn N, the
    same games (kind, detail, outcome) as the whole table's replay plays at that turn."""
    from bench.memo import memo

    monkeypatch.setitem(adversary.OPTIONS, "slajens", {"rounds": 1})
    seed = adversary.table_seed(19, 0)

    def games(turn):  # type: ignore[no-untyped-def]
        with memo():
            reports = adversary.play_one(
                seed, None, tmp_path, {}, 1.0, "slajens", None, 3, turn=turn
            )
        return sorted((r.kind, r.detail, r.outcome) for r in reports if r.forked)

    whole = games(None)
    turns = {detail.rsplit("(turn ", 1)[1] for _, detail, _ in whole}
    assert len(turns) > 2
    assert games(3) == [g for g in whole if g[1].endswith("(turn 3)")] != []


class _Scripted(random.Random):
    """A random stream whose next ``randrange`` answers are given (then its own)."""

    def __init__(self, answers: list[int], seed: int) -> None:
        super().__init__(seed)
        self.answers = answers

    def randrange(self, *args):  # type: ignore[no-untyped-def, override]
        return self.answers.pop(0) if self.answers else super().randrange(*args)


def test_a_flipped_entry_bit_that_makes_another_legal_action_is_the_deviators_move(tmp_path):
    """Found by bench adversary once ``raw`` flips were judged (table seed 738197508,
    Slaiga, turn 155): a bit flipped in the signed entry's bytes, inside its action, made
    another legal action, which the deviator's record did not take; it then sent its
    honest entry for the same step, a real equivocation counted as a valid entry refused.
    Such an entry is now the deviator's move, as a still-valid changed action is."""
    from p2p.wire import encode_body

    class AtAnAction(adversary.Table):
        def _dev_turn(self, d, body):  # type: ignore[no-untyped-def]
            self.deviate_at = adversary.MAX_ENTRIES + 1
            if self.deviation is None and body.TAG == ACTION_KIND:
                engine, seat = d.seat_view()
                rec = d.record
                entry = adversary.Entry(rec.table_id, d.slot, rec.step, rec.head, body)
                raw = encode_body(entry)
                at = raw.find(body.action)
                for i in range(at, at + len(body.action)):
                    for bit in range(8):
                        flipped = bytearray(raw)
                        flipped[i] ^= 1 << bit
                        got = adversary._entry_of(adversary.Signed(bytes(flipped), bytes(64)))
                        if (
                            got is not None
                            and got.body != body
                            and got == adversary.dataclasses.replace(entry, body=got.body)
                            and not adversary._action_owed(d, got.body.action)
                        ):
                            self.rng = _Scripted([i, bit], 1)
                            self.deviate_at = self.turns
                            return super()._dev_turn(d, body)
            super()._dev_turn(d, body)

    table = AtAnAction("slajens", 3, 7, adversary.Circle(), 0.0, "raw")
    report = _judged(table, tmp_path)
    assert table.deviation is not None and table.deviation.must_convict is False
    assert report.outcome == "accepted_valid" and report.failures == [], report


def test_a_replay_plays_the_table_the_run_played(monkeypatch, capsys):
    """``--replay SEED`` of a failure from a run with ``--game``: the table's game is the
    one the run drew among those games (a replay without them drew among all five and
    played another table: seed 738197508 of a Slaiga and Honest Slaiga run); ``--turn``
    goes with ``--replay`` only."""
    only = ("honest-slaiga", "slaiga")
    seed = next(
        s for s in range(738197508, 738197600) if adversary._table_game(s, only) == "slaiga"
    )
    played = []
    monkeypatch.setattr(adversary, "play_one", lambda *a, **kw: played.append((a, kw)) or [])
    for games in (only, ("slaiga",)):
        flags = [x for g in games for x in ("--game", g)]
        assert adversary.main(["--replay", str(seed), *flags, "--turn", "3"]) == 0
        args, kw = played.pop()
        assert args[0] == seed and args[5] == "slaiga" and kw["turn"] == 3
    assert adversary.main(["--replay", str(seed)]) == 0
    assert played.pop()[0][5] is None  # a run of every game: play_one draws it
    with pytest.raises(SystemExit):
        adversary.main(["--turn", "3"])
    assert "--turn goes with --replay" in capsys.readouterr().err
