"""A whole game on the signed record: the turn rule every peer folds, and one seat's part.

After the seat order (record steps 1-2, :mod:`p2p.table.forming`) a table whose
manifest names the protocol ``game`` (:class:`GameProtocol`) plays its game
on the record.  :class:`GameRule` is a :class:`p2p.record.order.Rule`: a pure fold
over the completed steps, so every peer and the offline verifier
(``slaiga verify``) agree, step by step, on who owes the next entry and of
which kind.  It holds

* a *seatless* engine instance of the game, which learns only public faces;
* the public half of the mental-poker dealer: every seat's key share, the
  current ciphertext of every card, and the reveal tokens published so far
  (each verified by this peer itself, so held-card points are always
  computed from values this peer checked, never from values a prover hands
  over);

and, on a live peer, the seat's own part (:class:`SeatKeys`): its secret key
share, the faces it learnt, and its own engine instance, which gets the
private answers.  After every obligation the seat engine's state hash must
equal the seatless engine's; a difference is a local bug and is raised loudly.

How each engine obligation (``engine.obligations``) becomes record steps.
Engine seat ``e`` is manifest slot ``seat_order[e]``; proof contexts are
``Context(table_id, 1, record step, engine seat)``, but a shuffle proof's
``Context(table_id, 1, 256 * round + position, engine seat)`` (its shuffle round and
its position in it: :func:`p2p.table.game_rule.shuffle.slot_context`).

=========================  ===================================================
obligation                 record steps
=========================  ===================================================
(start)                    ``key`` round: every seat publishes ``x_j G`` with a
                           Schnorr proof; card ``h`` starts as the public
                           masking of its encoding under the joint key
``Shuffle(handles)``       one ``shuffle`` step per seat in engine-seat order:
                           the pile permuted and re-masked, with a
                           Terelius-Wikstrom proof checked by every peer
``Reveal(hs, None)``       one ``tokens`` round of the seats whose tokens are
                           not yet public, each batch with a DLEQ proof
``Reveal(hs, {r})``        a ``remask`` by ``r`` of the cards whose ``r``-token
                           is already public (else everybody could open
                           them), then a ``tokens`` round of every seat but
                           ``r``; ``r`` opens with its own share
``Transfer(h, s, d)``      a ``remask`` of ``h`` by ``s`` (old tokens stop
                           opening it), then a private reveal to ``d``
``Prove(statement)``       by proof shape: ``proof`` (CDS threshold proof or
                           inequality proofs) checked by every peer;
                           ``HighestGiven``: ``sealed-proof`` to the verifier,
                           then the verifier's ``verdict`` (see below)
``Roll`` / ``JointRandom`` a ``dice`` round opening every seat's commitment
                           (made in the previous draw's ``dice`` round, or in
                           a ``commit`` round for the first draw); values by
                           rejection sampling from the joint seed
(an action is owed)        an ``action`` round of the seats to move; answers
                           of a multi-seat round are applied in the engine's
                           own order
(game over)                a ``final`` round: every seat signs the ranking and
                           the state hash, so a cut-short record is visibly
                           unfinished
(hands opened)             with the ``open_hands`` option only: an ``open``
                           round, every seat's secret key share ``x_j``
                           (checked: ``x_j G == X_j``), which opens every card
                           ever dealt (:mod:`~p2p.table.game_rule.open`)
=========================  ===================================================

A private reveal or transfer after which *every* seat may see the card (each
was shown it in turn) is carried out as a public reveal, so the seatless
engine learns the face like every seat engine does and their hashes agree.

One module per sub-protocol, each with the record bodies it owns.  The fold
(:mod:`~p2p.table.game_rule.fold`) finds an obligation's module in the dispatch
table ``DISCHARGE``, and a ``Prove`` statement's in ``PROOF_SHAPES`` by its shape
(each table looks a class up along its bases):

============================  ===========  ==========================================
obligation or proof shape     module       record kinds
============================  ===========  ==========================================
(start)                       ``keys``     ``key``
``Shuffle``                   ``shuffle``  ``shuffle``
``Reveal``, ``Transfer``      ``reveal``   ``tokens``, ``remask``
``Prove``: ``AtLeastInSet``,  ``held``     ``proof``
    ``NoneOfFace``
``Prove``: ``HighestGiven``   ``gift``     ``sealed-proof``, ``verdict``, ``unseal``
``Roll``, ``JointRandom``     ``dice``     ``commit`` (a game's first draw), ``dice``
(actions, the end)            ``fold``     ``action``, ``final``
(after the end, option)       ``open``     ``open`` (``open_hands``: every key share)
============================  ===========  ==========================================

:mod:`~p2p.table.game_rule.core` holds what they share: a step's ``Need``, the
``Job`` that does a step's costly part ahead of the fold in a worker thread
(``p2p/net/offload.py``), and our seat's secrets.  A sub-protocol is a function
``(rule, obligation) -> flow`` over the :class:`GameRule` it runs in: it yields a
``Need`` per record step and returns the seatless engine's answer and ours.

*Highest given* (Slave's exchange) is checked by its receiver alone, who must
not show the lowest given face to anyone; :mod:`~p2p.table.game_rule.gift` says
how, and ``p2p/RECORD_FORMAT.md`` §9 has the details.

Any entry that fails a check raises :class:`p2p.errors.InvalidMove` naming its
signer.  Any engine error met while folding completed steps is a seat's fault
too, whenever it comes: an action that the rules refuse only after a reveal (a
Slave play of cards that turn out not to beat the pile, a Slaiga discard
declared a king that shows a 6, a false shot, block, cancel or win claim) is
raised when the reveal completes (from :meth:`GameRule.advance`), naming the
actor, with the step of its signed action, which the record keeps as the
evidence.  So ``slaiga verify`` reaches the same verdict from the file alone.

Secrets that must survive a crash come from a per-table secret that the node
writes to disk (fsynced) before its first key share: the key share ``x``, the
dice commitment values and the gift boxes' one-time keys.  Everything else is fresh randomness, because the
node persists each own entry before sending it and never re-creates one.
"""

from __future__ import annotations

from p2p.table.game_rule.core import Job, Need, Point32, Proof64, SeatKeys, SeatList
from p2p.table.game_rule.dice import COMMIT_KIND, DICE_KIND, DiceBody
from p2p.table.game_rule.fold import (
    ACTION_KIND,
    DECISION_KINDS,
    DEFAULT_DECIDE_MAX_MS,
    DEFAULT_DECIDE_STALL_MS,
    DISCHARGE,
    FINAL_KIND,
    FIRST_STEP,
    GAME_NUMBER,
    GAME_PROTOCOL,
    MACHINE_KINDS,
    MAX_ACTION_BYTES,
    PROOF_SHAPES,
    ActionBody,
    FinalBody,
    GameProtocol,
    GameRule,
    decide_limits,
    describe,
)
from p2p.table.game_rule.gift import (
    SEALED_KIND,
    UNSEAL_KIND,
    VERDICT_KIND,
    Caveat,
    SealedProofBody,
    UnsealBody,
    VerdictBody,
)
from p2p.table.game_rule.held import PROOF_KIND, ProofBody
from p2p.table.game_rule.keys import KEY_KIND, KeyBody
from p2p.table.game_rule.open import OPEN_KIND, OPEN_SHARE_KIND, OpenBody, OpenShareBody
from p2p.table.game_rule.reveal import REMASK_KIND, TOKENS_KIND, RemaskBody, TokensBody
from p2p.table.game_rule.shuffle import SHUFFLE_KIND, ShuffleBody

__all__ = [
    "ACTION_KIND",
    "COMMIT_KIND",
    "DECISION_KINDS",
    "DEFAULT_DECIDE_MAX_MS",
    "DEFAULT_DECIDE_STALL_MS",
    "DICE_KIND",
    "DISCHARGE",
    "FINAL_KIND",
    "FIRST_STEP",
    "GAME_NUMBER",
    "GAME_PROTOCOL",
    "KEY_KIND",
    "MACHINE_KINDS",
    "MAX_ACTION_BYTES",
    "OPEN_KIND",
    "OPEN_SHARE_KIND",
    "PROOF_KIND",
    "PROOF_SHAPES",
    "REMASK_KIND",
    "SEALED_KIND",
    "SHUFFLE_KIND",
    "TOKENS_KIND",
    "UNSEAL_KIND",
    "VERDICT_KIND",
    "ActionBody",
    "Caveat",
    "DiceBody",
    "FinalBody",
    "GameProtocol",
    "GameRule",
    "Job",
    "KeyBody",
    "OpenBody",
    "OpenShareBody",
    "Need",
    "Point32",
    "Proof64",
    "ProofBody",
    "RemaskBody",
    "SealedProofBody",
    "SeatKeys",
    "SeatList",
    "ShuffleBody",
    "TokensBody",
    "UnsealBody",
    "VerdictBody",
    "decide_limits",
    "describe",
]
