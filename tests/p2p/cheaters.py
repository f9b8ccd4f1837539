"""The cheating-peer harness: one seat's contribution made wrong in one named way.

A :class:`Cheater` plugs into the game rule's test hook (``SeatKeys.cheat``: it
may replace a shuffle, tokens, a remask, a proof, a sealed gift's forbidden
set or its plaintext, the key that opens a disputed gift box, a verdict or a
dice opening), into the seat's decisions (a bot that
sometimes picks a forged action), and into the node's sending
(``NodeConfig.behaviour``: extra or altered signed entries).  Each kind
misbehaves at its first chance; honest peers must catch it, name the seat,
keep the signed evidence and end the game (exit code 4).

Used over processes by tests/p2p/cheat_peer.py (tests/p2p/test_cheats_procs.py); its
game hooks work in process too, with ``p2p.table.local_table`` (``SeatKeys.cheat``).
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

from crypto.elgamal import Ciphertext, encode_pile
from crypto.group import G, add, random_scalar
from crypto.shuffle import remask_with
from engine.errors import EngineError
from engine.players import BotPlayer
from p2p.record.chain import entry_signing_input
from p2p.table.game_rule import (
    FINAL_KIND,
    DiceBody,
    FinalBody,
    ProofBody,
    RemaskBody,
    ShuffleBody,
    TokensBody,
    VerdictBody,
)
from p2p.wire import Entry, Signed, encode_body

KINDS = (
    "token",
    "shuffle-drop",
    "shuffle-duplicate",
    "shuffle-substitute",
    "remask",
    "foreign-card",
    "false-miss",
    "gift-not-highest",
    "gift-junk",
    "gift-wrong-key",
    "false-complaint",
    "dice",
    "dice-nonce",
    "dice-next",
    "out-of-turn",
    "replay",
    "equivocation",
    "impersonation",
    "illegal-play",
    "late-lie",
)
"""The catalogue of cheats, each caught by every honest peer."""

GAME_OF = {
    "token": ("slave", 4),
    "shuffle-drop": ("slave", 4),
    "shuffle-duplicate": ("slave", 4),
    "shuffle-substitute": ("slave", 4),
    "remask": ("slaiga", 3),
    "foreign-card": ("slave", 4),
    "false-miss": ("honest-slaiga", 3),
    "gift-not-highest": ("slave", 4),
    "gift-junk": ("slave", 4),
    "gift-wrong-key": ("slave", 4),
    "false-complaint": ("slave", 4),
    "dice": ("slajens", 3),
    "dice-nonce": ("slajens", 3),
    "dice-next": ("slajens", 3),  # caught when the next draw is opened
    "out-of-turn": ("slajens", 3),
    "replay": ("slajens", 3),
    "equivocation": ("slajens", 3),
    "impersonation": ("slajens", 3),
    "illegal-play": ("slave", 4),
    "late-lie": ("slaiga", 3),  # a claim the seatless engine accepts, false once revealed
}
"""Which game (and seats) gives each kind its chance early."""


def slaiga_candidates(own: Any, seat: int) -> list[Any]:
    """Every Slaiga action naming one of ``seat``'s cards, whatever the card is."""
    from engine.games.slaiga.actions import CancelCheck, card_actions, jack_shots

    opps = tuple(t for t in range(own.seats) if t != seat)
    out: list[Any] = []
    for h in own.hand(seat):
        out.extend(card_actions(seat, h))
        out.extend(jack_shots(seat, h, opps))
        out.append(CancelCheck(seat, h))
    return out


def _accepts(game: Any, action: Any) -> bool:
    return game.check(action) is None


def lies(public: Any, own: Any, seat: int) -> list[Any]:
    """Slaiga actions the table's seatless engine (``public``) accepts now but the seat's
    own engine, which sees its cards, refuses: claims only a later reveal shows false."""
    if seat not in public.to_move():
        return []
    return [a for a in slaiga_candidates(own, seat) if _accepts(public, a) and not _accepts(own, a)]


def _substitute(rule: Any, ct: Ciphertext) -> Ciphertext:
    """A ciphertext of another card than ``ct`` holds."""
    shifted = Ciphertext(ct.c1, add(ct.c2, rule.deck.points[0]))
    return remask_with(shifted, rule.joint, random_scalar())


class Cheater:
    """Hooks for one cheating kind; each fires once."""

    def __init__(self, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown cheat {kind!r}; kinds: {', '.join(KINDS)}")
        self.kind = kind
        self.done = False
        self.alternatives: list[Any] = []

    def _once(self, kind: str) -> bool:
        if self.kind == kind and not self.done:
            self.done = True
            return True
        return False

    # ---- game-rule hooks (called as hook(rule, ...)) ----

    def shuffle(self, rule: Any, inputs, out, proof) -> ShuffleBody | None:
        if self._once("shuffle-drop"):
            return ShuffleBody(encode_pile(out[:-1]), proof.encode())
        if self._once("shuffle-duplicate"):
            return ShuffleBody(encode_pile((out[0], out[0], *out[2:])), proof.encode())
        if self._once("shuffle-substitute"):
            return ShuffleBody(encode_pile((_substitute(rule, out[0]), *out[1:])), proof.encode())
        return None

    def tokens(self, rule: Any, hs, tokens, proof) -> TokensBody | None:
        if self._once("token"):
            forged = [add(tokens[0], G), *tokens[1:]]
            return TokensBody(b"".join(t.data for t in forged), proof.encode())
        return None

    def remask(self, rule: Any, olds, news, proofs) -> RemaskBody | None:
        if self._once("remask"):
            forged = [_substitute(rule, news[0]), *news[1:]]
            return RemaskBody(encode_pile(forged), b"".join(p.encode() for p in proofs))
        return None

    def proof(self, rule: Any, hs) -> ProofBody | None:
        # a miss claim whose proof cannot hold: forged (whether or not the miss was forced)
        if self.kind == "false-miss":
            self.done = True
            return ProofBody(bytes(32))
        return None

    def highest(self, rule: Any, st, forbidden) -> list[int] | None:
        if self.kind != "gift-not-highest":
            return None
        # prove "none of my other cards is one of the forbidden faces I do not hold":
        # true, but not the statement the receiver checks
        held = {rule.mine.known[h] for h in st.rest}
        held_faces = {rule._face(k) for k in held}
        fake = [k for k in forbidden if rule._face(k) not in held_faces]
        self.done = True
        return fake or forbidden

    def seal(self, rule: Any, plain: bytes) -> bytes | None:
        """A gift box of junk (of the right size), so its receiver complains."""
        if self.kind in ("gift-junk", "gift-wrong-key") and not self.done:
            if self.kind == "gift-junk":
                self.done = True
            return bytes(b ^ 0x5A for b in plain)
        return None

    def unseal(self, rule: Any, key: bytes) -> bytes | None:
        """Asked to show the junk box's key, show another one."""
        if self._once("gift-wrong-key"):
            return key[:1] + bytes([key[1] ^ 1]) + key[2:]  # (byte 0's low bits are clamped)
        return None

    def verdict(self, rule: Any, honest: VerdictBody) -> VerdictBody | None:
        if honest.accept and self._once("false-complaint"):
            return VerdictBody(False)
        return None

    def opening(self, rule: Any, body: DiceBody) -> DiceBody | None:
        """Each field of a dice entry in turn: the opened value, its nonce, and the
        commitment to the next draw."""
        for kind, name in (("dice", "value"), ("dice-nonce", "nonce"), ("dice-next", "next")):
            if self._once(kind):
                flipped = bytes(b ^ 1 for b in getattr(body, name))
                return dataclasses.replace(body, **{name: flipped})
        return None

    # ---- decisions ----

    def forge_action(self, rule: Any, engine: Any, seat: int, honest: Any) -> Any:
        """The action to send instead of the bot's ``honest`` one (or ``honest``)."""
        if self.done:
            return honest
        if self.kind == "equivocation":
            # remember another decision, to sign for the same step as well (send_own)
            self.alternatives = [a for a in engine.legal_actions(seat) if a != honest]
            return honest
        name = rule.engine.NAME
        public = rule.engine
        if self.kind == "foreign-card" and name == "slave":
            from engine.games.slave.actions import Play

            others = [
                h for s in range(public.seats) if s != seat for h in public.zones[f"hand:{s}"]
            ]
            if others and public.phase == "play":
                self.done = True
                return Play(seat, (others[0],))
        if self.kind == "illegal-play" and name == "slave" and public.phase == "play":
            from engine.cards import slave_key
            from engine.games.slave.actions import Play

            top = getattr(public, "top", ())
            if top:
                old = max(slave_key(public.faces[h]) for h in top)
                mine = [h for h in engine.zones[f"hand:{seat}"] if h in engine.faces]
                low = [h for h in mine if slave_key(engine.faces[h]) < old]
                if low:
                    self.done = True
                    return Play(seat, (low[0],))
        if self.kind == "late-lie" and name in ("slaiga", "honest-slaiga"):
            found = lies(public, engine, seat)
            if found:
                self.done = True
                return found[0]
        if self.kind == "false-miss" and name == "honest-slaiga":
            from engine.games.slaiga.actions import Miss

            trial = copy.deepcopy(public)
            try:
                trial.apply(Miss(seat))
            except EngineError:
                return honest
            self.done = True
            return Miss(seat)
        if self.kind in ("gift-not-highest", "gift-junk", "gift-wrong-key") and name == "slave":
            from engine.cards import slave_key
            from engine.games.slave.actions import Give, Pass, Play

            if public.phase == "exchange" and isinstance(honest, Give):
                if self.kind != "gift-not-highest":
                    return honest
                hand = sorted(
                    engine.zones[f"hand:{seat}"], key=lambda h: slave_key(engine.faces[h])
                )
                return Give(seat, tuple(sorted(hand[: len(honest.cards)])))
            # lose the first deal on purpose, to be the one who gives
            legal = engine.legal_actions(seat)
            passes = [a for a in legal if isinstance(a, Pass)]
            if passes:
                return passes[0]
            plays = [a for a in legal if isinstance(a, Play) and len(a.cards) == 1]
            if plays:
                return min(plays, key=lambda a: slave_key(engine.faces[a.cards[0]]))
        return honest

    # ---- node behaviour (NodeConfig.behaviour) ----

    def send_own(self, node: Any, kind: str, accepted: Any) -> None:
        rec, mesh = node.record, node.mesh
        own = accepted.signed
        if self.kind == "replay" and not self.done and len(rec.hashes) > 3:
            self.done = True
            entry = accepted.entry
            stale = Entry(entry.table_id, entry.seat, entry.step, rec.hashes[-3], entry.body)
            mesh.broadcast(_sign(node, entry=stale))
            return
        if self.kind == "equivocation" and not self.done and kind == "action":
            game = node.driver.game
            others = self.alternatives
            if not others:
                mesh.broadcast(own)
                return
            self.done = True
            other = game.action_body(others[0])  # a second, different decision
            entry = accepted.entry
            twin = Entry(entry.table_id, entry.seat, entry.step, entry.prev, other)
            peers = sorted(mesh.connections)
            for i, peer in enumerate(peers):
                mesh.send_nowait(peer, own if i % 2 == 0 else _sign(node, entry=twin))
            return
        mesh.broadcast(own)

    def after_send(self, node: Any, kind: str, accepted: Any) -> None:
        rec, mesh = node.record, node.mesh
        if self.kind == "out-of-turn" and not self.done and kind == "action":
            self.done = True
            body = FinalBody(bytes(32), ())
            entry = Entry(rec.table_id, node.my_seat, rec.step, rec.head, body)
            assert body.TAG == FINAL_KIND
            mesh.broadcast(_sign(node, entry=entry))
        if self.kind == "impersonation" and not self.done and kind == "action":
            self.done = True
            victim = (node.my_seat + 1) % rec.manifest.n_seats
            entry = Entry(rec.table_id, victim, rec.step, rec.head, accepted.entry.body)
            mesh.broadcast(_sign(node, entry=entry))


def _sign(node: Any, entry: Entry) -> Signed:
    raw = encode_body(entry)
    return Signed(raw, node.identity.sign(entry_signing_input(raw)))


class CheatingBot(BotPlayer):
    """A bot whose decisions the cheater may replace."""

    def __init__(self, bot: Any, cheater: Cheater, rule_of: Any) -> None:
        super().__init__(bot)
        self.cheater = cheater
        self.rule_of = rule_of

    def choose(self, game: Any, seat: int) -> Any:
        honest = super().choose(game, seat)
        return self.cheater.forge_action(self.rule_of(), game, seat, honest)


def make_bot(spec: Any, seat: int, cheater: Cheater, rule_of: Any) -> CheatingBot:
    return CheatingBot(spec.bots["heuristic"](seat, random.Random(seat)), cheater, rule_of)


def force_signing(record: Any) -> None:
    """Let a cheater's record sign entries its own checks refuse (its peers must catch
    them): a refused entry is signed as it stands and handed out as if accepted."""
    from p2p.errors import LocalProtocolError
    from p2p.record.chain import Accepted, Offer, Status

    honest_sign = record.sign

    def sign(key: Any, seat: int, body: Any) -> Any:
        try:
            return honest_sign(key, seat, body)
        except LocalProtocolError:
            entry = Entry(record.table_id, seat, record.step, record.head, body)
            raw = encode_body(entry)
            signed = Signed(raw, key.sign(entry_signing_input(raw)))
            # our own record cannot go on past it: stop acting, leave the rest to the others
            record.owes = lambda seat: frozenset()
            return Offer(Status.ACCEPTED, (Accepted(entry.step, seat, entry, signed),))

    record.sign = sign
