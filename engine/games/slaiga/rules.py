"""Slaiga and Honest Slaiga (docs/rules/slaiga.md) on the engine core.

One class plays both variants: ``Slaiga`` (``slaiga``, lying allowed, the draw
pile face up, shots and blocks face down with claimed suits, every lie open to
a check) and ``HonestSlaiga`` (``honest-slaiga``, face-down draw pile, shots
and blocks face up, misses and win claims proved).

The game is split by concern: ``actions`` (the actions and their interned
tables), ``hands`` (card logic and the statements a seat proves), ``agenda``
(the turn structure and every handler), ``legal`` (legal moves and views), and
this module, which names the options and binds it all in one phase table.

Interpretations (where the rules leave a detail open; documented, not options)
------------------------------------------------------------------------------
* A win claim is "draw, then put one card face down"; it is true when the six
  cards left in hand contain a straight flush.
* Honest first answer: with fewer than three cards of T the defender must call
  miss (``Prove(FewerOfSuit)``); with three or more, conceding or blocking is
  backed by ``Prove(AtLeastOfSuit)``. In ``slaiga`` nothing is enforced.
* In ``slaiga`` a claim may say "ace"; an ace claim must be answered by an ace
  claim (ace rule), and a checked ace claim is true only for an ace.
* A jack volley has no ace rule (any bullet answers any bullet).
* A penalty larger than the payer's hand takes the whole hand.
* A joker's "draws one card" may come from either pile, like a reload.
* A cancelled shot/block check leaves the checker to answer the same card,
  and it may not be checked again; a cancelled miss check leaves the miss
  with its normal one-card penalty.
* A face-down shot or block whose face everyone already saw (a card taken
  from the face-up draw pile or the discard pile) is still a claim and may be
  checked; the check needs no new reveal.
"""

from __future__ import annotations

from engine.game import Phase
from engine.games.slaiga.actions import (
    AcceptCheck,
    Answer,
    CancelCheck,
    Check,
    ClaimWin,
    Concede,
    Discard,
    Draw,
    Give,
    GiveBack,
    JackShot,
    KingLook,
    Miss,
    MissVerdict,
    Pass,
    Place,
    QueenSwap,
    Shoot,
    ShotCard,
    Swap,
)
from engine.games.slaiga.agenda import SlaigaAgenda
from engine.games.slaiga.hands import KING_CAP
from engine.games.slaiga.legal import SlaigaMoves
from engine.options import OptionSpec

DEFAULT_MAX_TURNS = 1000

A, M = SlaigaAgenda, SlaigaMoves  # in the phase table: A's handlers, M's legal moves


class Slaiga(SlaigaMoves):
    """``slaiga``: the base game with lying."""

    NAME = "slaiga"
    LYING = True
    MIN_SEATS, MAX_SEATS = 2, 8
    OPTIONS = (
        OptionSpec("jokers", bool, True, "add two jokers (they cancel checks)"),
        OptionSpec(
            "max_turns",
            int,
            DEFAULT_MAX_TURNS,
            "turn cap: the game ends as a draw after this many turns",
            minimum=1,
        ),
        OptionSpec("turn_up_discard", bool, False, "[house] start the discard pile with a card"),
        OptionSpec("wrap_straights", bool, False, "[house] straights may wrap K-A-2"),
        OptionSpec("block_any", bool, True, "[house] blocks may be any card of the suit"),
        OptionSpec("check_ends_volley", bool, True, "[house] a shot/block check ends the volley"),
        OptionSpec(
            "miss_check_replaces", bool, True, "[house] a true miss check replaces the miss penalty"
        ),
        OptionSpec(
            "reveal_volley_cards", bool, False, "[house] reveal unchecked face-down volley cards"
        ),
        OptionSpec(
            "loser_reloads_first", bool, True, "[house] after a volley the loser reloads first"
        ),
        OptionSpec(
            "king_max", int, KING_CAP, "[house] most cards a king reveals", minimum=1, maximum=52
        ),
    )

    # A phase is the kind of the agenda's head task (see ``agenda``).
    PHASES = {
        "setup": Phase(),
        "turn": Phase(
            {Draw: A._on_draw, Shoot: A._on_shoot, JackShot: A._on_jack_shot}, legal=M._legal_turn
        ),
        "shot_card": Phase({ShotCard: A._on_shot_card}, legal=M._legal_shot_card),
        "discard": Phase(
            {Discard: A._on_discard, ClaimWin: A._on_claim_win}, legal=M._legal_discard
        ),
        "king": Phase({KingLook: A._on_king}, legal=M._legal_king),
        "queen": Phase({QueenSwap: A._on_queen}, legal=M._legal_queen),
        "answer": Phase(
            {
                Answer: A._on_answer,
                Concede: A._on_concede,
                Miss: A._on_miss,
                Check: A._on_check_card,
            },
            legal=M._legal_answer,
        ),
        "miss_answer": Phase(
            {Check: A._on_check_miss, Pass: A._on_accept_miss}, legal=M._legal_check_or_pass
        ),
        "check_response": Phase(
            {
                CancelCheck: A._on_cancel_check,
                AcceptCheck: A._on_accept_check,
                MissVerdict: A._on_miss_verdict,
            },
            legal=M._legal_check_response,
        ),
        "give": Phase({Give: A._on_give}, legal=M._legal_give),
        "place": Phase({Place: A._on_place}, legal=M._legal_place),
        "place_hand": Phase({Place: A._on_place}, legal=M._legal_place),
        "swap": Phase({Swap: A._on_swap, Pass: A._on_stop_swapping}, legal=M._legal_swap),
        "reload": Phase({Draw: A._on_reload}, legal=M._legal_draws),
        "give_back": Phase({GiveBack: A._on_give_back}, legal=M._legal_give_back),
        "win_ask": Phase(
            {Check: A._on_check_win, Pass: A._on_pass_win}, legal=M._legal_check_or_pass
        ),
        # automatic tasks
        "look": Phase(auto=A._auto_look),
        "volley_discard": Phase(auto=A._auto_volley_discard),
        "jack_pick": Phase(auto=A._auto_jack_pick),
        "finish": Phase(auto=A._auto_finish),
        "next_turn": Phase(auto=A._auto_next_turn),
        "resolve_check": Phase(auto=A._auto_resolve_check),
        "over": Phase(),
    }


class HonestSlaiga(Slaiga):
    """``honest-slaiga``: face-down draw pile, face-up volleys, proved misses and wins."""

    NAME = "honest-slaiga"
    LYING = False
    OPTIONS = tuple(
        OptionSpec(o.name, o.kind, False, "add two jokers (no use in honest play but jack volleys)")
        if o.name == "jokers"
        else o
        for o in Slaiga.OPTIONS
    )
