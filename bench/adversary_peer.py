"""``python -m bench.adversary_peer SPEC <cli.net arguments>``: a deviating peer process.

It runs the real ``cli.net`` peer (``--bot`` plays its seat) and deviates once,
as ``SPEC`` (JSON: ``kind``, ``at``, ``seed``) says, at its ``at``-th own
entry (or the first one after it that gives the kind a chance):

* ``field``: one field of the body changed before it is signed (a proof
  byte, a token, a pile, a commitment opening, a card, count or seat inside an
  action); the peer's own record takes it as it stands (``force_signing``);
* ``entry``: its signed entry sent with the seat, previous hash or table
  changed (the honest entry follows);
* ``raw``: entry bytes with one byte changed, signed (the honest one follows);
* ``kind``: a body of another kind, taken from its record, signed for this step;
* ``replay``: an older entry of its own resent verbatim, or its body re-signed
  for this step;
* ``equivocate``: a second legal action for the same step, each version sent to
  different peers;
* ``lie``: an action the table accepts now but its own cards make false;
* ``withhold``: its entry sent to only one peer (the others get it relayed);
* ``stop``: it exits without a word;
* ``twin``: at its ``at``-th decision it tells the bench (``twin_ready``) and waits,
  its table still running, until the bench creates the file ``go``: meanwhile the
  bench copies this seat's state and starts a second process on the copy
  (``resume``, :func:`twin_main`), which waits at the same decision (``twin-b``).
  Once both wait, the bench creates ``go``: each signs its own version of the step
  (the second twin another legal action), tells the bench (``twin_signed``) and
  freezes itself (``SIGSTOP``) before sending it; once both signed, the bench wakes
  both (``SIGCONT``) and each sends its version (``twin_sends``): two processes with
  the same keys and the same state signed two different entries for one step, each
  before it could hear of the other's, and both went out.

Bench-only: the product has no way to deviate on purpose.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

import msgpack

from bench.adversary import (
    _mutate_action,
    _mutate_value,
    _sign,
    _sign_raw,
    _valid_action,
    lie_candidates,
)
from bench.adversary_join import await_address
from cli import net
from engine import registry
from engine.players import BotPlayer
from p2p.net import node as node_module
from p2p.record.chain import Accepted, Offer, Status
from p2p.table.game_rule import ACTION_KIND
from p2p.wire import Entry, decode_body, encode_body


class Deviant:
    """The deviation of one peer: hooks for signing, sending and deciding."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.kind: str = spec["kind"]
        self.at: int = int(spec["at"])
        self.rng = random.Random(int(spec["seed"]))
        self.own = 0
        self.decisions = 0
        self.done = False
        self.node: Any = None
        self.alternative: Any = None
        self.report: dict[str, Any] = {"kind": self.kind}
        self.go: str = spec.get("go", "")
        self.waited = False
        """A twin: it waited at its race decision for the bench's ``go``."""
        self.race_step: int | None = None
        """The first twin: the step it waits at (it tells the bench when it signs it)."""

    def _log(self, **what: Any) -> None:
        """Tell the bench what was done (stderr, one JSON line)."""
        self.report.update(what)
        print(json.dumps({"event": "deviation", **self.report}), file=sys.stderr, flush=True)

    def _due(self) -> bool:
        return not self.done and self.own >= self.at

    # ---- signing: body changes go in before the signature ----

    def wrap_sign(self, record: Any) -> None:
        honest_sign = record.sign

        def sign(key: Any, seat: int, body: Any) -> Any:
            self.own += 1
            if self.kind == "field" and self._due() and body.TAG != ACTION_KIND:
                body = self._mutated_body(body)
            elif self.kind == "kind" and self._due():
                body = self._other_kind(record, body)
            elif self.kind == "replay" and self._due() and self.rng.random() < 0.6:
                body = self._old_body(record, body)
            try:
                return honest_sign(key, seat, body)
            except Exception:  # noqa: BLE001 - our own checks refuse it: sign it anyway
                entry = Entry(record.table_id, seat, record.step, record.head, body)
                signed = _sign(key, entry)
                record.owes = lambda seat: frozenset()  # stop acting; the others judge it
                return Offer(Status.ACCEPTED, (Accepted(entry.step, seat, entry, signed),))

        record.sign = sign

    def _mutated_body(self, body: Any) -> Any:
        names = [name for name, _ in body.FIELDS]
        self.rng.shuffle(names)
        for name in names:
            value = getattr(body, name)
            new, how = _mutate_value(self.rng, value)
            try:
                out = dataclasses.replace(body, **{name: new})
                encode_body(out)
            except Exception:  # noqa: BLE001 - breaks the schema: try another field
                continue
            if out != body:
                self.done = True
                self._log(detail=f"{body.TAG}.{name}:{how}", step=self.node.record.step)
                return out
        return body

    def _other_kind(self, record: Any, body: Any) -> Any:
        pool = [e.body for e in record.entries() if e.body.TAG != body.TAG]
        if not pool:
            return body
        other = self.rng.choice(pool)
        self.done = True
        self._log(detail=f"{body.TAG}->{other.TAG}", step=record.step)
        return other

    def _old_body(self, record: Any, body: Any) -> Any:
        mine = [e.body for e in record.entries() if e.seat == self.node.my_seat]
        mine = [b for b in mine if b.TAG == body.TAG and b != body]
        if not mine:
            return body
        self.done = True
        self._log(detail="re-signed", step=record.step)
        return self.rng.choice(mine)

    # ---- sending (NodeConfig.behaviour) ----

    def send_own(self, node: Any, kind: str, accepted: Any) -> None:
        mesh, rec = node.mesh, node.record
        own = accepted.signed
        peers = sorted(mesh.connections)
        if self.kind in ("twin", "twin-b") and self.race_step == accepted.step:
            # our own version of the race step, signed and fsynced: freeze before it goes
            # out; the bench wakes both twins once both signed theirs, so that each
            # signs before it can hear of the other's
            self.race_step = None
            print(json.dumps({"event": "twin_signed"}), file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)
            print(json.dumps({"event": "twin_sends"}), file=sys.stderr, flush=True)
            _resend(mesh, own)
        if self.kind == "stop" and self._due():
            self._log(step=accepted.step)
            os._exit(0)
        if self.kind == "withhold" and self._due() and len(peers) > 1:
            self.done = True
            self._log(step=accepted.step)
            mesh.send_nowait(peers[0], own)
            return
        ready = self.alternative is not None and len(peers) > 1
        if self.kind == "equivocate" and self._due() and kind == ACTION_KIND and ready:
            self.done = True
            other = rec.rule.next_rule.action_body(self.alternative)
            twin = dataclasses.replace(accepted.entry, body=other)
            self._log(step=accepted.step)
            for i, peer in enumerate(peers):
                mesh.send_nowait(peer, own if i % 2 == 0 else _sign(node.identity, twin))
            return
        if self.kind == "entry" and self._due():
            self.done = True
            entry = accepted.entry
            what = self.rng.choice(("seat", "prev", "table_id"))
            if what == "seat":
                others = [s for s in range(rec.manifest.n_seats) if s != node.my_seat]
                bad = dataclasses.replace(entry, seat=self.rng.choice(others))
            elif what == "prev":
                bad = dataclasses.replace(entry, prev=self.rng.choice(rec.hashes[:-1]))
            else:
                bad = dataclasses.replace(entry, table_id=self.rng.randbytes(len(entry.table_id)))
            self._log(detail=f"entry.{what}", step=accepted.step)
            mesh.broadcast(_sign(node.identity, bad))
        if self.kind == "raw" and self._due():
            self.done = True
            raw = bytearray(own.entry)
            i = self.rng.randrange(len(raw))
            raw[i] ^= 1 << self.rng.randrange(8)
            self._log(detail=f"byte {i}", step=accepted.step)
            mesh.broadcast(_sign_raw(node.identity, bytes(raw)))
        if self.kind == "replay" and self._due():
            mine = [s for s in rec.signed_from(1) if _seat(s) == node.my_seat and s != own]
            if mine:
                self.done = True
                self._log(detail="verbatim", step=accepted.step)
                mesh.broadcast(self.rng.choice(mine))
        mesh.broadcast(own)

    # ---- deciding ----

    def choose(self, rule: Any, engine: Any, seat: int, honest: Any) -> Any:
        self.decisions += 1
        if self.kind == "twin-b" and not self.done:
            # the twin's first decision is the step the first process waits at: another
            # legal action, so that the two versions differ
            self.done = True
            others = [a for a in engine.legal_actions(seat) if a != honest]
            choice = self.rng.choice(others) if others else honest
            self._log(detail="other action" if others else "same action", step=rule.step_no - 1)
            return choice
        due = not self.done and self.own + 1 >= self.at
        if self.kind == "equivocate" and due:
            others = [a for a in engine.legal_actions(seat) if a != honest]
            self.alternative = self.rng.choice(others) if others else None
        if self.kind == "lie" and due:
            try:
                lies = lie_candidates(rule.engine, engine, seat)
            except Exception:  # noqa: BLE001
                lies = []
            if lies:
                self.done = True
                lie = self.rng.choice(lies)
                self._log(detail=type(lie).__name__, step=self.node.record.step)
                return lie
        if self.kind == "field" and due and self.rng.random() < 0.5:
            body = rule.action_body(honest)
            raw, how = _mutate_action(self.rng, body.action)
            try:
                action = rule.engine.decode_action(msgpack.unpackb(raw, raw=False))
            except Exception:  # noqa: BLE001 - it does not decode: not an action to send
                return honest
            if action.seat == seat and action != honest:
                self.done = True
                valid = _valid_action(engine, action)
                self._log(detail=how, step=self.node.record.step, valid=valid)
                return action
        return honest


class _WaitingBot:
    """The first of two twins: a player the node asks in a task of its own (not a
    :class:`BotPlayer`, which it asks at once), so that the table keeps running while it
    waits for the second twin at its decision."""

    def __init__(self, bot: _Bot) -> None:
        self.bot = bot

    def observe(self, game: Any, seat: int, events: Any) -> None:
        self.bot.observe(game, seat, events)

    async def decide(self, game: Any, seat: int) -> Any:
        dv = self.bot.deviant
        if not dv.waited and dv.decisions + 1 >= dv.at:
            import trio

            dv.waited = True
            go = Path(dv.go)
            dv.race_step = dv.node.record.step
            ready = {"event": "twin_ready", "step": dv.race_step}
            print(json.dumps(ready), file=sys.stderr, flush=True)
            with trio.move_on_after(TWIN_WAIT_S):
                while not go.exists():
                    await trio.sleep(0.02)
        if not game.legal_actions(seat):
            return None  # the table moved on while we waited: the node drops the answer
        return self.bot.choose(game, seat)

    def progress(self, text: str) -> None:
        pass

    def finish(self, summary: Any) -> None:
        pass


TWIN_RESENDS = 40
TWIN_RESEND_S = 0.25
"""A twin sends its version again every quarter second for ten seconds (or until the
table is over for it)."""


def _resend(mesh: Any, own: Any) -> None:
    """A twin sends its version of the race step again and again: the two processes
    hold links to the same peers under one key, each newer link replacing the older, and
    while both were frozen the peers' keepalives dropped them, so for a second or two
    after they wake one twin may hold no link at all and a message can be lost with the
    link it went on (a repeat is ignored by a peer that has it, and convicts the twins
    at a peer that took the other version)."""
    import trio

    async def again() -> None:
        for _ in range(TWIN_RESENDS):
            await trio.sleep(TWIN_RESEND_S)
            try:
                mesh.broadcast(own)
            except Exception:  # noqa: BLE001 - the table is over: nothing to send to
                return

    trio.lowlevel.spawn_system_task(again)


def _seat(signed: Any) -> int | None:
    try:
        return decode_body(signed.entry, Entry).seat  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        return None


class _Bot(BotPlayer):
    def __init__(self, bot: Any, deviant: Deviant) -> None:
        super().__init__(bot)
        self.deviant = deviant

    def choose(self, game: Any, seat: int) -> Any:
        honest = super().choose(game, seat)
        rule = self.deviant.node.driver.game
        return self.deviant.choose(rule, game, seat, honest)


TWIN_WAIT_S = 180.0
"""How long the first of two twins waits for the second before it plays on alone."""


def main(argv: list[str]) -> int:
    spec, rest = json.loads(argv[0]), argv[1:]
    deviant = _DEVIANT[0] = Deviant(spec)
    make_config = net._config

    def config(args, use_discovery, **kw):  # type: ignore[no-untyped-def]
        cfg = make_config(args, use_discovery, **kw)
        cfg.behaviour = deviant

        def make_player(names, seat, game):  # type: ignore[no-untyped-def]
            bot = registry.get(game).bots["heuristic"](seat, random.Random(seat))
            player = _Bot(bot, deviant)
            return _WaitingBot(player) if deviant.kind in ("twin", "twin-b") else player

        cfg.make_player = make_player
        return cfg

    net._config = config  # type: ignore[assignment]
    original = node_module.Node._new_record

    def new_record(self):  # type: ignore[no-untyped-def]
        original(self)
        deviant.node = self
        deviant.wrap_sign(self.record)

    node_module.Node._new_record = new_record  # type: ignore[method-assign]
    if spec.get("address"):  # started beside the opener (bench/adversary_join.py)
        rest = [*rest, "--peer", await_address(spec["address"])]
    return net.main(rest)


_DEVIANT: list[Deviant] = [None]  # type: ignore[list-item]
"""This process's deviation (:func:`main`)."""


def twin_main(argv: list[str]) -> int:
    """A twin: ``resume`` a copy of a seat's state on any free port (the seat's own
    port is taken by the first process), so two processes run one seat; its first
    decision is another legal action (``twin-b``).  ``argv``: SPEC, then ``cli.net``'s.

    A seat dials only the seats before it, and the seats after it dial the address in
    the manifest, which is the first twin's: so the second dials every other seat (a
    seat takes a newer connection from a member in place of the older one)."""
    from p2p.net import mesh as mesh_module
    from p2p.net import opening

    real_wait = mesh_module.Mesh.wait_connected

    async def wait_connected(self, peers):  # type: ignore[no-untyped-def]
        node = _DEVIANT[0].node
        if node is not None and node.manifest is not None:
            for member in node.manifest.seats:
                if member.identity in peers:
                    self.keep_connected(member.identity, member.address)
        await real_wait(self, peers)

    mesh_module.Mesh.wait_connected = wait_connected  # type: ignore[method-assign]
    spec = json.loads(argv[0])
    if spec.get("table"):
        # started with the table (its imports done), it waits for the bench to copy the
        # first twin's state and name the table to resume
        argv = [argv[0], "resume", await_address(spec["table"], TWIN_WAIT_S), *argv[1:]]

    real = opening.parse_address

    def parse_address(address: str) -> tuple[str, int]:
        host, _ = real(address)
        return host, 0  # resume listens on its seat's address: ours is the first's

    # resuming is the one place the opening reads an address: our own seat's
    opening.parse_address = parse_address  # type: ignore[assignment]
    return main(argv)


def verify_main(paths: list[str]) -> int:
    """``slaiga verify --json`` (:func:`cli.verify.main`) on each file, in this one process:
    one JSON line per file (``path``, exit ``code``, verify's own JSON ``out``).  The
    bench's memo (:mod:`bench.memo`) checks a statement the files share once."""
    import contextlib
    import io

    from bench.memo import memo
    from cli import verify

    with memo():
        for path in paths:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                code = verify.main(["verify", "--json", path])
            print(json.dumps({"path": path, "code": code, "out": buf.getvalue()}), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "verify":
        sys.exit(verify_main(sys.argv[2:]))
    if sys.argv[1] == "twin":
        sys.exit(twin_main(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
