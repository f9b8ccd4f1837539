"""A proven cheat in player words (``p2p.record.verify.plain_cheat``): one sentence, the
step once, seats counted from 1, no engine class names or proof names but the short
"(kind: ...)" tail."""

from __future__ import annotations

from p2p.record.verify import plain_cheat


def test_a_move_naming_another_seat() -> None:
    said = plain_cheat(
        "InvalidMove", "action at step 55: action names seat 1, sent by seat 2", "Bob", 55
    )
    assert said == (
        "Bob's move at step 55 names seat 2 of the seat order, which is not theirs"
        " (kind: InvalidMove)"
    )


def test_a_proof_that_does_not_check_out() -> None:
    said = plain_cheat(
        "InvalidMove",
        "tokens at step 12: reveal tokens of seat 2 do not verify: DLEQ proof does not verify"
        " (challenge mismatch)",
        "Bob",
        12,
    )
    assert said == (
        "Bob's proof for the cards they revealed at step 12 does not check out (kind: InvalidMove)"
    )


def test_an_illegal_move_drops_the_engine_repr() -> None:
    said = plain_cheat(
        "InvalidMove", "illegal action: you do not hold 7♥ (Play(seat=1, cards=(3,)))", "Cat", 9
    )
    assert said == "Cat's move at step 9 breaks the rules: you do not hold 7♥ (kind: InvalidMove)"
    said = plain_cheat("OutOfTurn", "spoke at step 9, owed by Ann", "Cat", 9)
    assert said == "Cat spoke out of turn at step 9; it was owed by Ann (kind: OutOfTurn)"
