"""The one Fiat-Shamir transcript used by every proof in :mod:`crypto`.

Fiat and Shamir (1986) turn an interactive public-coin proof into a
non-interactive one by replacing the verifier's challenge with a hash.
Bernhard, Pereira and Warinschi ("How not to prove yourself", ASIACRYPT 2012)
show that the *weak* variant, which hashes only the prover's commitments, is
unsound when the adversary can pick the statement after the fact.  So every
proof here hashes the *whole statement* -- generators, the joint key, every
input and output element, all commitments -- and a :class:`Context` naming the
table, game, protocol step and seat, so a proof cannot be replayed anywhere
else.

Encoding: SHA-512 absorbs a version tag, then for each item an operation tag
byte, a length-prefixed label and length-prefixed data.  Challenges are the
64-byte digest of a copy of the state reduced mod L (bias < 2**-250); the
digest is then absorbed, so later challenges depend on earlier ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from crypto.errors import InvalidEncoding
from crypto.group import SCALAR_BYTES, L, Point, check_scalar
from crypto.nonces import NonceStream

_VERSION_TAG = b"slaiga/v1/transcript"
_TAG_APPEND = b"A"
_TAG_CHALLENGE = b"C"
_TAG_CHALLENGES = b"M"
_LEN_BYTES = 8
_INT_BYTES = 8
_MAX_INT = 2 ** (8 * _INT_BYTES) - 1
MAX_TABLE_ID_BYTES = 64


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(_LEN_BYTES, "little") + data


def _check_uint(name: str, n: int) -> None:
    if type(n) is not int or not 0 <= n <= _MAX_INT:
        raise InvalidEncoding(f"{name} must be an int in [0, 2**64)")


@dataclass(frozen=True, slots=True)
class Context:
    """Where a proof belongs: table, game number, protocol step and seat.

    ``seat`` is the seat that makes the proof (the prover), so a proof by one
    seat cannot be passed off as another seat's.
    """

    table_id: bytes
    game: int
    step: int
    seat: int

    def __post_init__(self) -> None:
        if type(self.table_id) is not bytes or not 0 < len(self.table_id) <= MAX_TABLE_ID_BYTES:
            raise InvalidEncoding(f"table_id must be 1..{MAX_TABLE_ID_BYTES} bytes")
        _check_uint("game", self.game)
        _check_uint("step", self.step)
        _check_uint("seat", self.seat)

    def encode(self) -> bytes:
        """Unambiguous byte encoding (length-prefixed table id, then 3 x u64)."""
        return (
            _lp(self.table_id)
            + self.game.to_bytes(_INT_BYTES, "little")
            + self.step.to_bytes(_INT_BYTES, "little")
            + self.seat.to_bytes(_INT_BYTES, "little")
        )

    def with_seat(self, seat: int) -> Context:
        return Context(self.table_id, self.game, self.step, seat)

    def with_step(self, step: int) -> Context:
        return Context(self.table_id, self.game, step, self.seat)


class Transcript:
    """A running Fiat-Shamir hash, bound to a protocol name and a context."""

    __slots__ = ("_h",)

    def __init__(self, protocol: str, context: Context) -> None:
        if type(protocol) is not str or not protocol:
            raise InvalidEncoding("protocol name must be a non-empty str")
        if not isinstance(context, Context):
            raise InvalidEncoding("context must be a Context")
        self._h = hashlib.sha512(_lp(_VERSION_TAG))
        self.append("protocol", protocol.encode())
        self.append("context", context.encode())

    def append(self, label: str, data: bytes) -> None:
        if type(data) is not bytes:
            raise InvalidEncoding(f"transcript data for {label!r} must be bytes")
        self._h.update(_TAG_APPEND + _lp(label.encode()) + _lp(data))

    def append_point(self, label: str, p: Point) -> None:
        self.append(label, p.data)

    def append_points(self, label: str, ps: Iterable[Point]) -> None:
        """Append a list of points as one item (count-prefixed)."""
        ps = list(ps)
        self.append(label, len(ps).to_bytes(_LEN_BYTES, "little") + b"".join(p.data for p in ps))

    def append_scalar(self, label: str, k: int) -> None:
        check_scalar(k, what=label)
        self.append(label, k.to_bytes(SCALAR_BYTES, "little"))

    def append_int(self, label: str, n: int) -> None:
        _check_uint(label, n)
        self.append(label, n.to_bytes(_INT_BYTES, "little"))

    def copy(self) -> Transcript:
        """An independent fork of the current state."""
        t = Transcript.__new__(Transcript)
        t._h = self._h.copy()
        return t

    def nonces(
        self, label: str, *secret: bytes, insecure_test_seed: bytes | None = None
    ) -> NonceStream:
        """The prover's nonces: hedged on everything absorbed so far, its ``secret`` witness
        bytes and fresh randomness (:mod:`crypto.nonces`); the transcript is unchanged."""
        return NonceStream(
            label,
            public=(self._h.copy().digest(),),
            secret=secret,
            insecure_test_seed=insecure_test_seed,
        )

    def challenge(self, label: str) -> int:
        """A challenge scalar in ``[0, L)`` derived from everything appended so far."""
        self._h.update(_TAG_CHALLENGE + _lp(label.encode()))
        digest = self._h.copy().digest()
        self._h.update(digest)
        return int.from_bytes(digest, "little") % L

    def challenges(self, label: str, n: int) -> list[int]:
        """``n`` challenge scalars (e.g. random-linear-combination weights)."""
        _check_uint("n", n)
        self._h.update(_TAG_CHALLENGES + _lp(label.encode()) + n.to_bytes(_INT_BYTES, "little"))
        out = []
        for i in range(n):
            fork = self._h.copy()
            fork.update(i.to_bytes(_INT_BYTES, "little"))
            out.append(int.from_bytes(fork.digest(), "little") % L)
        self._h.update(self._h.copy().digest())
        return out
