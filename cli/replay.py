"""``slaiga replay RECORD-FILE``: step through a saved game on the table screen, checking it.

The file is folded step by step, as the person steps, through a spectator
(:class:`p2p.table.spectator.Spectator`): the very checks ``slaiga verify`` and every seat
run (signatures, the hash chain, turns, every shuffle, token and hand proof, every action).
Where a check fails the replay stops, and its last page shows the verdict and the signed
evidence, as ``verify`` reports them.  With no secret the screen shows the public view:
only the cards the rules made public.  With ``--seat N --secret FILE`` it shows seat N's
own view, folded from that seat's table secret (the ``tables/<table id>.secret`` file of
its state folder, which a peer erases once the table has ended; a copy kept elsewhere
works too).

Keys: → and ← one step, PgDn and PgUp the next or previous move, Home and End, a step
number typed (``g`` first if you like) then Enter to jump there, q to quit.  Without a
terminal (``--plain``, or output that is not a terminal) it prints every step as plain
lines.  Exit status: 0 when the record checks out (to the end, in plain mode), 4 when a
player is proven to have cheated, 1 when it fails otherwise (a damaged, forged or unfinished
file), 2 when it cannot be read or on usage errors.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

from cli.narrate import Names, narrate
from cli.render import (
    PromptView,
    TableView,
    end_lines,
    plain,
    record_lines,
    render_page,
    render_screen,
    result_lines,
    wrap,
)
from cli.verify import RECORD_HELP, no_record_given
from crypto.errors import CryptoError
from crypto.group import base_mul
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from engine.game import Event
from engine.words.names import printable
from p2p.errors import CorruptRecordFile, LocalError, P2PError, RemoteProtocolError
from p2p.record.chain import Record
from p2p.record.store import MAGIC, MAGIC_V1, load
from p2p.record.verify import Failure, not_a_file, other_version, signature_at
from p2p.table.game_rule import ACTION_KIND, GameProtocol, SeatKeys
from p2p.table.seat import game_of, rule_factory
from p2p.table.spectator import Spectator
from p2p.wire import Entry, Signed, decode_body

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNREADABLE = 2
EXIT_CHEAT = 4
"""A player was proven to cheat (``cli.args.EXIT_STATUS``, as at a live table)."""

TABLE_SECRET_BYTES = 32
"""A table secret file holds the 32-byte table secret, then the table's 32-byte X25519
seal key (written by the peer, ``p2p/net/node.py``, before its first entry)."""
HINT = "→ ← step · PgDn PgUp move · Home End · type a step, rules or log, Enter · q quit"
REDRAW_S = 0.2  # while a long fold runs, the screen says how far it got this often
KIND_WORDS = {
    "key": "key shares",
    "shuffle": "a shuffle",
    "tokens": "reveal tokens",
    "remask": "a remask",
    "proof": "a hand proof",
    "sealed-proof": "a sealed gift",
    "verdict": "the gift's verdict",
    "unseal": "the gift box's key",
    "commit": "dice commitments",
    "dice": "dice openings",
    "action": "a move",
    "final": "the signed result",
}
"""Each record entry kind (RECORD_FORMAT.md §9) in player words."""
SEAT_VIEW_KEYS = {"hand": None, "to_place": (), "drawn": None}
"""Parts of a seat's view that belong to that seat itself; the public view has none."""


class ReplayError(Exception):
    """The record or the secret cannot be replayed (said in one line, exit status 2)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """The table after one record step: what the screen shows there."""

    step: int
    view: dict[str, Any]
    to_move: tuple[int, ...]
    events: int  # narrated events told by then
    entries: int
    proofs: int
    what: str  # who sent what at this step, in words
    move: bool  # a player decided something at this step


def _size(n: int) -> str:
    """How a file that is no table secret is off, in bytes."""
    want = TABLE_SECRET_BYTES + 32
    if n > want:
        return f"more than {want} bytes"
    return f"{n} byte{'' if n == 1 else 's'}, not {want}"


def read_secret(path: Path, manifest: Any, slot: int) -> tuple[bytes, SealKey]:
    """A seat's table secret file: the secret and the table's seal key, which must be the
    one the signed manifest names for ``slot`` (else this is another table's, or seat's)."""
    if (what := not_a_file(path)) is not None:
        raise ReplayError(f"{path} is {what}, not a table secret file")
    try:
        with open(path, "rb") as f:  # at most one byte too many: /dev/zero is no secret
            data = f.read(TABLE_SECRET_BYTES + 33)
    except OSError as exc:
        raise ReplayError(f"cannot read the table secret {path}: {exc.strerror or exc}") from None
    if len(data) != TABLE_SECRET_BYTES + 32:
        raise ReplayError(f"{path} is not a table secret ({_size(len(data))})")
    try:
        seal = SealKey.from_private_bytes(data[TABLE_SECRET_BYTES:])
    except CryptoError as exc:
        raise ReplayError(f"{path} is not a table secret: {exc}") from None
    if seal.public != manifest.seats[slot].seal_key:
        name = manifest.seats[slot].name
        raise ReplayError(f"{path} is not {name}'s table secret at this table")
    return data[:TABLE_SECRET_BYTES], seal


class Replay:
    """A record file folded on demand, one step at a time, keeping a :class:`Stop` after
    every step (so stepping back costs nothing).  ``seat`` (from 1, in the drawn seat
    order) and ``secret`` (a table secret file) show that seat's view."""

    def __init__(self, path: Path, seat: int | None = None, secret: Path | None = None) -> None:
        self.path = path
        if (what := not_a_file(path)) is not None:
            raise ReplayError(f"{path} is {what}, not a record file")
        try:
            with open(path, "rb") as f:
                magic = f.read(len(MAGIC))
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
        if magic not in (MAGIC, MAGIC_V1):
            raise ReplayError(f"{path}: this is not a Slaiga record file")
        try:
            loaded = load(path)
        except CorruptRecordFile as exc:
            raise ReplayError(f"{path} is damaged: {exc}") from None
        other = other_version(loaded.genesis)
        if other is not None:
            raise ReplayError(f"{path}: {other}")
        try:
            self.spectator = Spectator(loaded.genesis)
        except P2PError as exc:
            raise ReplayError(f"{path}: the table's genesis does not verify: {exc}") from None
        self.manifest = self.spectator.manifest
        if not isinstance(self.manifest.protocol, GameProtocol):
            raise ReplayError(f"{path} holds no game (protocol {self.manifest.protocol.TAG!r})")
        self.torn_bytes = loaded.torn_bytes
        self.votes = len(loaded.votes)
        self.queue = _canonical(loaded.entries)
        self.file_steps = _last_step(self.queue)
        """The last step the file holds (for "step 6 of 52" before the fold gets there)."""
        self.taken = 0
        self.accepted: list[Signed] = []
        self.stops: list[Stop] = []
        self.events: list[str] = []
        self.failure: Failure | None = None
        self.problem: str | None = None  # our own failure, or the seat's secret does not fit
        self.seat_arg, self.secret_path = seat, secret
        self.seat_record: Record | None = None
        self._key_checked = False
        self.names: Names | None = None
        self.done = False
        if seat is not None and secret is None:
            raise ReplayError("--seat needs --secret FILE: that seat's table secret")
        if secret is not None and seat is None:
            raise ReplayError("--secret needs --seat N: whose secret it is")
        if seat is not None and not 1 <= seat <= self.manifest.n_seats:
            raise ReplayError(f"--seat {seat}: this table has seats 1 to {self.manifest.n_seats}")

    # ---- who is who --------------------------------------------------------------------

    @property
    def order(self) -> tuple[int, ...]:
        return self.spectator.seat_order or tuple(range(self.manifest.n_seats))

    def name(self, slot: int | None) -> str:
        if slot is None or not 0 <= slot < self.manifest.n_seats:
            return "nobody"
        return self.manifest.seats[slot].name

    @property
    def title(self) -> str:
        if self.seat_arg is None:
            return "public view"
        if self.spectator.seat_order is None:
            return f"seat {self.seat_arg}'s view"
        return f"{self.name(self.order[self.seat_arg - 1])}'s view"

    # ---- folding -------------------------------------------------------------------------

    def fold(self, until: int, progress: Callable[[int], None] | None = None) -> None:
        """Fold steps until ``until`` stops exist (or the record ends)."""
        last = time.monotonic()
        while len(self.stops) < until and not self.done:
            self._fold_one()
            if progress is not None and time.monotonic() - last > REDRAW_S:
                last = time.monotonic()
                progress(self.spectator.step - 1)

    def fold_all(self, progress: Callable[[int], None] | None = None) -> None:
        self.fold(sys.maxsize, progress)

    def _fold_one(self) -> None:
        """Offer envelopes until a step completes; a refusal ends the replay there."""
        spectator = self.spectator
        while self.taken < len(self.queue):
            frame, signed = self.queue[self.taken]
            self.taken += 1
            update = spectator.offer(signed, frame)
            if update.failure is not None:
                self.failure = update.failure
                self._finish()
                return
            if update.accepted:
                self.accepted.append(signed)
                if not self._seat_offer(signed):
                    self._finish()
                    return
            self._tell(update.events)
            if update.completed:
                self._stop(update.completed[-1])
                if spectator.finished:
                    self._finish()
                return
        self._finish()

    def _finish(self) -> None:
        self.done = True
        rec = self.spectator.record
        if self.failure is None and rec.failure is not None:
            self.problem = str(rec.failure)

    def _seat_offer(self, signed: Signed) -> bool:
        """The seat's own record takes what the spectator accepted (its view and events)."""
        if self.seat_arg is None:
            return True
        if self.seat_record is None:
            order = self.spectator.seat_order
            if order is None:
                return True  # the seat order is not drawn yet: the seat starts once it is
            slot = order[self.seat_arg - 1]
            assert self.secret_path is not None
            table_secret, seal = read_secret(self.secret_path, self.manifest, slot)
            # the replay signs nothing: the identity is only the SeatKeys field's shape
            keys = SeatKeys(slot, IdentityKey.generate(), seal, table_secret)
            self.seat_record = Record(self.spectator.record.genesis, rule_factory(keys))
            backlog = self.accepted
        else:
            backlog = [signed]
        who = self.title.removesuffix(" view")
        try:
            for env in backlog:
                self.seat_record.offer(env)
        except (P2PError, CryptoError) as exc:
            self.problem = f"this table secret does not fit {who} ({type(exc).__name__}: {exc})"
            return False
        game = game_of(self.seat_record)
        if game is not None and game.mine is not None and game.pubs and not self._key_checked:
            # the secret's key share must be the one the seat published in the key round
            self._key_checked = True
            if base_mul(game.mine.secret) != game.pubs[game.mine.seat]:
                raise ReplayError(
                    f"{self.secret_path} is not {who}'s table secret at this table"
                    " (its key share is not the one they published)"
                )
        if self.seat_record.failure is not None:
            self.problem = f"{who}'s view cannot go on: {self.seat_record.failure}"
            return False
        return True

    def _tell(self, public: tuple[Event, ...]) -> None:
        names = self._names()
        if names is None:
            return
        if self.seat_record is not None:
            game = game_of(self.seat_record)
            events = game.take_events() if game is not None else []
        else:
            events = list(public)
        self.events.extend(narrate(e, names) for e in events)

    def _names(self) -> Names | None:
        if self.names is None and self.spectator.seat_order is not None:
            names = [self.name(slot) for slot in self.order]
            me = self.seat_arg - 1 if self.seat_arg is not None else 0
            self.names = Names(names, me)
            if self.seat_arg is None:
                self.names.me = -1  # nobody's "you": a spectator holds no seat
        return self.names

    def _stop(self, step: int) -> None:
        game = self.spectator.game
        if game is None or game.joint is None:
            return  # no table to show before the key round
        engine, me = game.engine, 0
        if self.seat_record is not None:
            seat_game = game_of(self.seat_record)
            assert seat_game is not None and seat_game.mine is not None
            engine, me = seat_game.mine.engine, seat_game.mine.seat
        view = copy.deepcopy(engine.view(me))
        if self.seat_record is None:
            view.update({k: v for k, v in SEAT_VIEW_KEYS.items() if k in view})
            if "seat" in view:
                view["seat"] = -1
        entries = self.spectator.record.steps[step]
        kinds: dict[str, list[str]] = {}
        for slot in sorted(entries, key=lambda s: self.order.index(s) if s in self.order else s):
            kinds.setdefault(entries[slot].entry.kind, []).append(self.name(slot))
        what = "; ".join(
            f"{KIND_WORDS.get(kind, kind)} from {', '.join(who)}" for kind, who in kinds.items()
        )
        self.stops.append(
            Stop(
                step,
                view,
                tuple(game.engine.to_move()) if not game.done else (),
                len(self.events),
                self.spectator.entries,
                self.spectator.proofs,
                what,
                ACTION_KIND in kinds,
            )
        )

    # ---- what to say ---------------------------------------------------------------------

    def checked(self, stop: Stop | None = None) -> str:
        entries = stop.entries if stop is not None else self.spectator.entries
        proofs = stop.proofs if stop is not None else self.spectator.proofs
        text = f"{entries} signature{'' if entries == 1 else 's'} and {proofs} proof"
        return text + ("" if proofs == 1 else "s") + " checked"

    def summary(self) -> dict[str, Any]:
        """What the end page shows (the keys ``cli.render.end_lines`` reads)."""
        result = self.spectator.result() or {}
        f = self.failure
        culprit = None
        if f is not None and f.culprit is not None and f.culprit in self.order:
            culprit = self.order.index(f.culprit)
        return {
            "game": self.manifest.game,
            "ranking": result.get("ranking"),
            "scores": result.get("scores"),
            "draw": result.get("draw", False),
            "reason": result.get("reason", ""),
            "record": str(self.path),
            "entries": self.spectator.entries,
            "proofs": self.spectator.proofs,
            "culprit": culprit,
        }

    def verdict_lines(self) -> list[str]:
        """Why the replay stopped early: the verdict and its signed evidence, or the gap."""
        f = self.failure
        if f is not None:
            where = f" at step {f.step}" if f.step is not None else ""
            if f.culprit is not None:
                seat = self.order.index(f.culprit) + 1 if f.culprit in self.order else None
                who = f"{self.name(f.culprit)}" + (f" (seat {seat})" if seat else "")
                head = f"Cheating proven{where}: {who} broke the rules; the record holds the proof."
            elif f.kind == "FoldFailed":
                head = (
                    f"This program failed{where} (our bug; nobody is blamed, the file is intact)."
                )
            else:
                head = (
                    f"The record fails{where}: it is forged or damaged (nobody is proven at fault)."
                )
            # the reason and the evidence in slaiga verify's words (no error class, no frames)
            lines = [head, f.message]
            lines += [
                f"evidence: {signature_at(e.frame)}, {e.signature.hex()[:32]}…" for e in f.evidence
            ]
            return [printable(line) for line in lines]
        if self.problem is not None:
            return [f"The replay stops at step {self.spectator.step - 1}: {self.problem}"]
        if not self.spectator.finished:
            owing = ", ".join(self.name(s) for s in sorted(self.spectator.record.waiting_on()))
            game = self.spectator.game
            end = (
                "every player signed the result, but the hands were never opened"
                " (silent, not a cheat)"
                if game is not None and game.done
                else "the game is unfinished (nobody signed its end)"
            )
            lines = [
                f"The record stops at step {self.spectator.step}, still owed by"
                f" {owing or 'nobody'}: {end}."
            ]
            if self.votes:
                lines.append(
                    "The file holds votes to end the table: slaiga verify says whether"
                    " every other player voted to stop (then nobody is to blame)."
                )
            return lines
        return []

    def opened_lines(self) -> list[str]:
        """Every hand ever dealt, once the seats opened their keys after the game (a table
        with the ``open_hands`` option); ``[]`` otherwise."""
        deals = self.spectator.opened_hands()
        if not deals:
            return []
        lines = ["Hands opened after the game (option open_hands): every card ever dealt"]
        for n, d in enumerate(deals, start=1):
            lines.append(f"deal {n} (shuffled at step {d['step']}):")
            for e, cards in sorted(d["hands"].items()):
                slot = self.order[e] if e < len(self.order) else None
                who = self.name(slot) if slot is not None else f"seat {e + 1}"
                lines.append(f"  {e + 1}. {who}: {' '.join(cards) or '(no cards)'}")
        return [printable(line) for line in lines]

    @property
    def ok(self) -> bool:
        return (
            self.done and self.failure is None and self.problem is None and self.spectator.finished
        )


def _cards(cards: Any) -> str:
    return " ".join(str(c) for c in cards) or "no cards"


def _canonical(envelopes: tuple[Signed, ...]) -> list[tuple[int, Signed]]:
    """The file's envelopes as ``slaiga verify`` replays them: any that does not decode
    first (it is judged at once), then by step, then seat, then frame."""
    bad: list[tuple[int, Signed]] = []
    good: list[tuple[tuple[int, int, int], int, Signed]] = []
    for frame, signed in enumerate(envelopes, start=1):
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError:
            bad.append((frame, signed))
            continue
        assert isinstance(entry, Entry)
        good.append(((entry.step, entry.seat, frame), frame, signed))
    good.sort(key=lambda g: g[0])
    return bad + [(frame, signed) for _, frame, signed in good]


def _last_step(queue: list[tuple[int, Signed]]) -> int:
    """The highest step of the file's entries, counted only up to one step per entry (a
    doctored step number cannot make the screen say "step 6 of 9223372036854775807")."""
    last = 0
    for _, signed in queue:
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError:
            continue
        assert isinstance(entry, Entry)
        if last < entry.step <= len(queue):
            last = entry.step
    return last


# ---- the screen ----------------------------------------------------------------------------


class Screen:
    """The replay at a terminal (``cli.screen.Terminal``-like: draw, read_key, size)."""

    def __init__(self, replay: Replay, term: Any) -> None:
        self.replay = replay
        self.term = term
        self.at = 0  # index into replay.stops; len(stops) is the end page
        self.typed = ""
        self.message = ""

    def run(self) -> None:
        r = self.replay
        if hasattr(self.term, "on_resize"):
            self.term.on_resize = self.draw  # redrawn at the new size at once
        r.fold(1, self._progress)
        while True:
            self.draw()
            key = self.term.read_key(3600.0)
            if key is None:
                continue
            if key in ("q", "Q", "eof") or (key == "esc" and not self.typed):
                return
            self.key(key)

    def key(self, key: str) -> None:
        r = self.replay
        self.message = ""
        if key == "esc":
            self.typed = ""
        elif key == "backspace":
            self.typed = self.typed[:-1]
        elif len(key) == 1 and key.isalpha() and self.typed.isalpha():
            self.typed = (self.typed + key)[:9]  # a word goes on: rules, log
        elif key in ("g", "G"):
            self.typed = ""
            self.message = "type a step number, then Enter"
        elif key.isdigit() and len(key) == 1:
            self.typed = (self.typed + key)[:9]
        elif len(key) == 1 and key.isalpha() and not self.typed:
            self.typed = key  # a word begins: rules, log
        elif key == "enter" and self.typed.isdigit():
            self.jump(int(self.typed))
            self.typed = ""
        elif key == "enter" and self.typed:
            word, self.typed = self.typed.lower(), ""
            if word in ("rules", "log"):
                self.page(word)
            else:
                self.message = f"{word!r}: type a step number, rules or log, then Enter"
        elif key == "right":
            self.go(self.at + 1)
        elif key == "left":
            self.at = max(0, min(self.at, len(r.stops)) - 1)
        elif key == "home":
            self.at = 0
        elif key == "end":
            r.fold_all(self._progress)
            self.at = len(r.stops)
        elif key == "pgdn":
            i = self.at + 1
            while True:
                r.fold(i + 1, self._progress)
                if i >= len(r.stops) or r.stops[i].move:
                    break
                i += 1
            self.at = min(i, len(r.stops))
        elif key == "pgup":
            i = min(self.at, len(r.stops)) - 1
            while i > 0 and not r.stops[i].move:
                i -= 1
            self.at = max(0, i)

    def page(self, word: str) -> None:
        """The rules of the table at this step (a rule book made at the table included),
        or every event up to it, as full pages, as a player types them at the table."""
        r = self.replay
        stop = r.stops[min(self.at, len(r.stops) - 1)] if r.stops else None
        if word == "rules":
            from cli.rules import table_rules

            title = "Rules"
            body = table_rules(r.manifest.game, stop.view if stop is not None else None)
        else:
            title = "Log: every event so far, newest last"
            body = list(r.events[: stop.events] if stop is not None else ()) or [
                "(nothing has happened yet)"
            ]
        at = 10**9 if word == "log" else 0
        while True:
            width, height = self.term.size()
            lines, pages = render_page(title, body, at, width, height, word == "log")
            at = min(at, pages - 1)
            self.term.draw(lines)
            key = self.term.read_key(3600.0)
            if key in (" ", "pgdn", "down", "right") and at < pages - 1:
                at += 1
            elif key in ("b", "pgup", "up", "left") and at > 0:
                at -= 1
            elif key in ("enter", "esc", "q", "eof", " ", "pgdn"):
                return

    def go(self, index: int) -> None:
        r = self.replay
        r.fold(index + 1, self._progress)
        self.at = min(index, len(r.stops) if r.done else len(r.stops) - 1)

    def jump(self, step: int) -> None:
        r = self.replay
        while not r.done and (not r.stops or r.stops[-1].step < step):
            r.fold(len(r.stops) + 1, self._progress)
        before = [i for i, s in enumerate(r.stops) if s.step <= step]
        if not before:
            self.at = 0
            self.message = f"the table is shown from step {r.stops[0].step}" if r.stops else ""
            return
        self.at = before[-1]
        if r.stops[self.at].step != step:
            self.message = f"no table to show at step {step}: step {r.stops[self.at].step}"
            if step > r.stops[-1].step and r.done:
                self.message = f"the record ends at step {r.stops[-1].step}"

    def _progress(self, step: int) -> None:
        width, height = self.term.size()
        lines = [Text(f"Checking the record… step {step}", style="bold")]
        self.term.draw(lines + [Text("")] * (height - 1))

    def lines(self) -> list[Text]:
        r = self.replay
        width, height = self.term.size()
        if self.at >= len(r.stops):
            return self.end_page(width, height)
        stop = r.stops[self.at]
        names = r._names()
        assert names is not None
        events = r.events[: stop.events]
        t = TableView(r.manifest.game, stop.view, names, stop.to_move, events, over=False)
        # the file's last step until the whole file is checked, then the last one checked
        last = r.stops[-1].step if r.done and r.stops else max(r.file_steps, stop.step)
        verdict = "no cheat" if r.failure is None or stop is not r.stops[-1] else "cheat proven"
        title = f"Replay step {stop.step} of {last} · {r.checked(stop)}, {verdict}"
        prompt = PromptView(title, (), 0, None, self.typed, self.message, None, HINT)
        out = render_screen(t, prompt, width, height)
        head = out[0].plain
        if " · you are " in head:
            head = head.split(" · you are ")[0]
        out[0] = Text(f"{head} · replay, {r.title}"[:width], style="bold")
        return out

    def end_page(self, width: int, height: int) -> list[Text]:
        r = self.replay
        names = r._names() or Names([r.name(s) for s in r.order], 0)
        summary = r.summary()
        if r.ok:
            body = end_lines(summary, names) + [Text(x) for x in r.opened_lines()]
        else:
            body = [
                Text(line, style="bold red") for x in r.verdict_lines() for line in wrap(x, width)
            ]
            body += record_lines(summary, names)
        fitted: list[Text] = []
        for line in body:
            if not line.plain.strip():
                continue
            if line.cell_len <= width:
                fitted.append(line)
            else:  # a long path or verdict: wrapped, never cut
                fitted += [Text(x, style=line.style) for x in wrap(line.plain, width)]
        body = fitted[: height - 1]
        hint = Text("← back to the table · Home: the start · q quit", style="dim")
        return body + [Text("")] * (height - 1 - len(body)) + [hint]

    def draw(self) -> None:
        self.term.draw(self.lines())


# ---- plain lines ------------------------------------------------------------------------------


class _Printable:
    """A text stream that shows a control character as "?" (names come from the players:
    an escape sequence in one must not reach the terminal)."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(printable(text))

    def flush(self) -> None:
        self.out.flush()


def print_plain(replay: Replay, out: Any = None) -> None:
    """Every step as a plain line, its events under it, then how the game ended."""
    out = _Printable(out or sys.stdout)
    r = replay
    m = r.manifest
    print(
        f"Replay of table {m.table_id.hex()}: {m.game}, {m.n_seats} seats, {r.title}",
        file=out,
        flush=True,
    )
    if r.torn_bytes:
        print(
            f"the last signature was only half written and is left out ({r.torn_bytes} bytes)",
            file=out,
        )
    told = 0
    seated = False
    shown: Any = None
    while not r.done:
        n = len(r.stops)
        r.fold(n + 1)
        if not seated and r.names is not None:
            seated = True
            order = ", ".join(f"{i}. {name}" for i, name in enumerate(r.names.names, 1))
            print(f"seats in the drawn order: {order}", file=out)
        for stop in r.stops[n:]:
            print(f"step {stop.step}: {stop.what}", file=out)
            for e in r.events[told : stop.events]:
                print(f"  · {e}", file=out)
            told = stop.events
            hand = stop.view.get("hand") if r.seat_arg is not None else None
            if hand is not None and hand != shown:
                shown = hand
                print(f"  {r.title.removesuffix(' view')} hand: {_cards(hand)}", file=out)
        out.flush()
    for e in r.events[told:]:
        print(f"  · {e}", file=out)
    names = r._names() or Names([r.name(s) for s in r.order], 0)
    if r.ok:
        page = result_lines(r.summary(), names) + record_lines(r.summary(), names)
        print(plain(page), file=out)
        for line in r.opened_lines():
            print(line, file=out)
    else:
        for line in r.verdict_lines():
            print(line, file=out)
        print(f"{r.checked()} before it stopped.", file=out)
    out.flush()


# ---- the command ------------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``replay`` on a subparsers object."""
    p = sub.add_parser(
        "replay",
        help="step through a saved game on the table screen, checking every proof",
        description="Step through a finished game from its record file, on the table screen: "
        "→ and ← one step, PgDn and PgUp one move, Home and End, a step number typed then "
        "Enter to jump there, q to quit. Every signature and proof is checked as it goes, "
        "like slaiga verify; the replay stops where a cheat is proven and shows the evidence. "
        "It shows the public view (only the cards the rules made public), or with --seat N "
        "--secret FILE that seat's own view. Exit 0: the record checks out; 4: a player is "
        "proven to have cheated; 1: it fails otherwise (a damaged, forged or unfinished "
        "record); 2: unreadable, or a usage error.",
    )
    p.add_argument("record", metavar="RECORD-FILE", nargs="?", help=RECORD_HELP)
    p.add_argument(
        "--seat",
        type=int,
        metavar="N",
        help="show seat N's own view (seats counted from 1 in the drawn order; needs --secret)",
    )
    p.add_argument(
        "--secret",
        type=Path,
        metavar="FILE",
        help="that seat's table secret (tables/<table id>.secret in its state folder; a peer "
        "erases it once the table has ended, so only a copy kept before that works)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="print every step as plain lines instead of the screen (the default when the "
        "output is not a terminal)",
    )
    p.set_defaults(func=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    if args.record is None:
        return no_record_given("replay")
    try:
        replay = Replay(Path(args.record), args.seat, args.secret)
        if args.plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
            print_plain(replay)
        else:
            from cli.screen import Terminal

            term = Terminal()
            term.start()
            try:
                Screen(replay, term).run()
            finally:
                term.stop()
            for line in replay.verdict_lines() if replay.done else ():
                print(printable(line))
    except (ReplayError, LocalError) as exc:
        print(printable(f"error: {exc}"), file=sys.stderr)
        return EXIT_UNREADABLE
    if not replay.done:
        return EXIT_OK  # the person left before the end: nothing failed so far
    if replay.ok:
        return EXIT_OK
    f = replay.failure
    return EXIT_CHEAT if f is not None and f.culprit is not None else EXIT_FAILED
