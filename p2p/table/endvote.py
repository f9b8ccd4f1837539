"""Ending a table whose player vanished, by a signed vote of the players who remain.

Sans-I/O: what a vote signs, how one is made and checked, and when a set of votes
ends a table (docs/design.md, "Ending such a table early by a signed vote";
p2p/RECORD_FORMAT.md §10).  A vote is a :class:`p2p.wire.EndVote`: seat ``seat``
signs, with its identity key,

    ``b"slaiga/v1/end" || table_id || u64be(step) || head || u8(absent)``

saying "the player in slot ``absent`` owes step ``step`` of the record whose last
completed step hashes to ``head``, has vanished, and I agree to stop here".  With
valid votes of every seat but ``absent`` for one (step, head, absent), the table
ends as abandoned; the votes prove that the others agreed to stop, not that anyone
cheated, so nobody is convicted.  Voting is final for the voter: it signs no
further entry at that table.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from crypto.errors import CryptoError
from crypto.identity import IdentityKey, verify_signature
from p2p.errors import BadVote
from p2p.table.forming import Manifest
from p2p.wire import EndVote

END_DOMAIN = b"slaiga/v1/end"


def vote_message(table_id: bytes, step: int, head: bytes, absent: int) -> bytes:
    """The exact bytes a vote's signature covers."""
    return END_DOMAIN + table_id + step.to_bytes(8, "big") + head + bytes([absent])


def sign_vote(
    identity: IdentityKey, table_id: bytes, seat: int, step: int, head: bytes, absent: int
) -> EndVote:
    """Our vote (seat ``seat``) to end the table for ``absent`` at ``step``/``head``."""
    signature = identity.sign(vote_message(table_id, step, head, absent))
    return EndVote(table_id, seat, step, head, absent, signature)


def _name(manifest: Manifest, slot: int) -> str:
    return manifest.seats[slot].name


def check_vote(
    manifest: Manifest,
    vote: EndVote,
    *,
    step: int | None = None,
    head: bytes | None = None,
    owing: Iterable[int] | None = None,
) -> None:
    """Raise :class:`BadVote` saying which check fails; ``None`` if ``vote`` holds.

    Always checked: the table id, that the voter is a seat other than the absent
    one, that the absent one is a seat, and the voter's signature.  With ``step``
    and ``head`` (the record's current step and the hash of its last completed
    step) the vote must be for exactly them, and with ``owing`` (the seats that
    owe that step) the absent seat must be one of them: a vote to end the table
    for a seat that is not absent is refused."""
    n = manifest.n_seats
    if vote.table_id != manifest.table_id:
        raise BadVote(
            f"the vote is for table {vote.table_id.hex()}, not this table"
            f" ({manifest.table_id.hex()})"
        )
    if vote.seat >= n:
        raise BadVote(f"the vote names slot {vote.seat} as its voter; the table has {n} seats")
    if vote.absent >= n:
        raise BadVote(f"the vote names slot {vote.absent} as absent; the table has {n} seats")
    voter = _name(manifest, vote.seat)
    if vote.seat == vote.absent:
        raise BadVote(f"a vote by {voter} to end the table for {voter}: nobody votes for itself")
    message = vote_message(vote.table_id, vote.step, vote.head, vote.absent)
    try:
        verify_signature(manifest.seats[vote.seat].identity, message, vote.signature)
    except CryptoError:
        raise BadVote(
            f"the vote claims to be {voter}'s, but {voter}'s key did not sign it"
            " (forged or damaged; nobody is blamed)"
        ) from None
    absent = _name(manifest, vote.absent)
    if step is not None and vote.step != step:
        raise BadVote(f"{voter}'s vote is for step {vote.step}, but the record is at step {step}")
    if head is not None and vote.head != head:
        raise BadVote(
            f"{voter}'s vote is for another record than ours at step {vote.step}"
            f" (head {vote.head.hex()[:16]}…, ours {head.hex()[:16]}…)"
        )
    if owing is not None and vote.absent not in set(owing):
        raise BadVote(
            f"{voter} votes to end the table for {absent}, who does not owe step"
            f" {vote.step}: a vote for a player who is not absent is refused"
        )


@dataclass(frozen=True, slots=True)
class Tally:
    """What a set of votes says about a record at (``step``, ``head``, ``owing``).

    ``ended`` iff every seat but ``absent`` cast a valid vote for it; ``voters`` are the
    slots of the valid votes; ``problems`` say why the other votes do not count."""

    absent: int | None
    voters: tuple[int, ...]
    missing: tuple[int, ...]
    problems: tuple[str, ...]

    @property
    def ended(self) -> bool:
        return self.absent is not None and not self.missing and not self.problems


def tally(
    manifest: Manifest,
    votes: Iterable[EndVote],
    step: int,
    head: bytes,
    owing: Iterable[int],
) -> Tally:
    """Count ``votes`` for the record at ``step`` whose last head is ``head``.

    Every vote must hold for exactly this step and head (:func:`check_vote`) and name
    the same absent seat; a byte-identical copy counts once, two different votes of
    one seat are a problem."""
    owing = frozenset(owing)
    good: dict[int, EndVote] = {}
    problems: list[str] = []
    absent: int | None = None
    for vote in votes:
        try:
            check_vote(manifest, vote, step=step, head=head, owing=owing)
        except BadVote as exc:
            problems.append(str(exc))
            continue
        if absent is None:
            absent = vote.absent
        elif vote.absent != absent:
            problems.append(
                f"{_name(manifest, vote.seat)} votes to end the table for"
                f" {_name(manifest, vote.absent)}, the others for {_name(manifest, absent)}"
            )
            continue
        known = good.get(vote.seat)
        if known is not None and known != vote:
            problems.append(f"{_name(manifest, vote.seat)} signed two different votes")
            continue
        good[vote.seat] = vote
    missing: tuple[int, ...] = ()
    if absent is not None:
        missing = tuple(s for s in range(manifest.n_seats) if s != absent and s not in good)
    return Tally(absent, tuple(sorted(good)), missing, tuple(problems))


__all__ = ["END_DOMAIN", "Tally", "check_vote", "sign_vote", "tally", "vote_message"]
