"""Blame and forks: who a detected violation names, and the evidence kept and spread.

*Split view.*  A seat that signs two versions of one step and shows each to
different peers forks the record: nobody holds both versions, and the symptom is an
honest seat's next entry chaining to a hash we do not know (:class:`BrokenChain`).
Such a break is not blamed at once: we ask the peer that delivered it and the
entry's author for their whole record (``Fetch`` from step 1, once per peer and step
of ours).  Its copy of the forked step conflicts with ours, which
:class:`p2p.record.chain.Record` reports as :class:`Equivocation` with both signed
envelopes, naming the seat that signed both.  Chain breaks still unexplained when
the table stalls or ends are reported as what they look like
(:meth:`Blame.blame_suspects`).

*Equivocation* is reported once per seat and step, and both signed envelopes are
relayed to every peer, so each honest peer holds the proof even if it only ever saw
one version.  On a game table a proven cheat ends the game (:meth:`Blame.convict`),
and every refused, validly signed entry is kept in our record file as the evidence
``slaiga verify`` re-checks.
"""

from __future__ import annotations

from p2p import wire
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    Equivocation,
    ForgedSignature,
    RemoteProtocolError,
)
from p2p.table.effects import Broadcast, Persist, Send
from p2p.table.events import CheatSeen, Convicted, Forked
from p2p.table.results import CheatReport, evidence_step
from p2p.table.session.context import Context


class Blame:
    """Cheat reports, equivocations, unexplained chain breaks and the evidence kept."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cheats: list[CheatReport] = []
        self.evidence: set[bytes] = set()
        """Signatures of refused entries already in our file."""
        self.equivocations: set[tuple[int, int]] = set()
        """(seat, step) of every proven equivocation."""
        self.suspects: list[tuple[BrokenChain, int | None]] = []
        """Chain breaks not yet explained, with the link each came from."""
        self._fork_fetches: set[tuple[int, int]] = set()

    def forks(self) -> tuple[int, int]:
        """How many forks are known (proven, suspected): a change means new signed
        entries that fork from ours arrived."""
        return len(self.equivocations), len(self.suspects)

    # -- what an offer found -----------------------------------------------

    def forged(self, exc: ForgedSignature, via: int | None) -> None:
        """The claimed seat did not sign it; the connection that carried it is to blame."""
        self.report(exc, via, blame_via=True)

    def refused(self, signed: wire.Signed, exc: CheatDetected, via: int | None) -> None:
        """A validly signed entry the record refused: keep it as evidence, then route it."""
        self.keep_evidence(signed, exc)
        self.on_cheat(exc, via)

    def junk(self, exc: RemoteProtocolError, via: int | None) -> None:
        """Junk, or an entry of another table (``ForeignEntry``): nothing any seat signed
        is evidence here; only the link that carried it is at fault, and only to us."""
        if via is not None:
            kind = type(exc).__name__
            self.cheats.append(CheatReport(via, kind, str(exc), via))
            self.ctx.out.append(CheatSeen(**self.ctx.culprit(via), kind=kind, reason=str(exc)))

    def on_cheat(self, exc: CheatDetected, via: int | None) -> None:
        """Route a detected violation: forks are investigated, equivocation is spread
        (see the module docstring)."""
        ctx = self.ctx
        if isinstance(exc, BrokenChain):
            if self.equivocations:
                return  # the proven fork explains it
            self.suspects.append((exc, via))
            ctx.out.append(Forked(**ctx.who(exc.seat), via=via))
            for slot in {via, exc.seat}:
                if slot is not None and slot != ctx.my_seat:
                    self._fetch_whole_record(slot)
            return
        if isinstance(exc, Equivocation):
            first, first_sig, second, second_sig = exc.evidence[:4]
            step = wire.decode_body(first, wire.Entry).step  # type: ignore[attr-defined]
            if (exc.seat, step) in self.equivocations:
                return
            self.equivocations.add((exc.seat, step))
            if not ctx.ended():
                # once a cheat ended the game, a convicted seat's new versions would only
                # flood every link (as in keep_evidence)
                ctx.out.append(Broadcast(wire.Signed(first, first_sig)))
                ctx.out.append(Broadcast(wire.Signed(second, second_sig)))
            # the fork this equivocation causes explains the chain breaks seen so far
            self.suspects.clear()
        self.report(exc, via)
        self.convict(exc, via)

    def keep_evidence(self, signed: wire.Signed, exc: CheatDetected) -> None:
        """Write a refused, validly signed entry to our record file: the signed evidence
        that ``slaiga verify`` re-checks (its own signer is the one it convicts)."""
        ctx = self.ctx
        if isinstance(exc, ForgedSignature | BrokenChain):
            return
        if not ctx.is_game() or ctx.ended():
            # once a cheat has ended the game its evidence is kept; more from a convicted
            # seat would only let it grow every peer's file and flood every link
            return
        envelopes = [signed]
        if isinstance(exc, Equivocation):
            # both versions: the other one may be held for a future step (so not in the
            # file), and one envelope alone proves nothing
            first, first_sig = exc.evidence[0], exc.evidence[1]
            envelopes.insert(0, wire.Signed(first, first_sig))
        for env in envelopes:
            if env.signature in self.evidence or ctx.record.holds(env):
                continue  # already in the file (as evidence, or accepted)
            self.evidence.add(env.signature)
            ctx.out.append(Persist(env, sync=True))
            # every seat gets the evidence itself: one the deviator never showed it
            # (a held entry refused at its step) must not leave it waiting on us
            ctx.out.append(Broadcast(env))

    def convict(self, exc: CheatDetected, via: int | None) -> None:
        """On a game table a proven cheat ends the game: name the seat, spread the evidence."""
        ctx = self.ctx
        if not ctx.is_game() or ctx.ended():
            return
        step = evidence_step(exc, ctx.record)
        ctx.convicted = CheatReport(exc.seat, type(exc).__name__, exc.reason, via, step)
        kind = type(exc).__name__
        ctx.out.append(Convicted(**ctx.culprit(exc.seat), kind=kind, reason=exc.reason, step=step))
        # relay what convicts it, so a seat it fed a different story convicts it too
        for signed in ctx.record.signed_from(max(1, ctx.record.step - 1)):
            ctx.out.append(Broadcast(signed))

    def _fetch_whole_record(self, slot: int) -> None:
        ctx = self.ctx
        key = (slot, ctx.record.step)
        if key in self._fork_fetches:
            return
        self._fork_fetches.add(key)
        ctx.out.append(Send(ctx.key(slot), wire.Fetch(ctx.manifest.table_id, 1)))

    def blame_suspects(self) -> None:
        """Chain breaks that no equivocation explained are reported as broken chains."""
        suspects, self.suspects = self.suspects, []
        for exc, via in suspects:
            if exc.evidence and self.ctx.record.took(exc.evidence[0]):
                continue  # the fork was ours: the record took that very entry since (a refold)
            self.report(exc, via)

    def report(self, exc: CheatDetected, via: int | None, blame_via: bool = False) -> None:
        culprit = via if blame_via and via is not None else exc.seat
        report = CheatReport(culprit, type(exc).__name__, exc.reason, via)
        self.cheats.append(report)
        self.ctx.out.append(
            CheatSeen(**self.ctx.culprit(culprit), kind=report.kind, reason=exc.reason)
        )
