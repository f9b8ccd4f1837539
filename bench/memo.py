"""Bench only: what makes ``slaiga bench adversary`` fast and replayable in process.

Two things, both installed for the length of a ``with`` block and removed after it;
real peers never use either:

* **A memo of verified statements** (:func:`memo`).  In one process the bench runs
  every seat of a table, a seatless verifier, and ``slaiga verify`` on each honest
  seat's file, so the same shuffle proof is checked four or five times, and the same
  point encoding decoded as often.  The memo keeps

  - the digest of every shuffle statement that a real batch check accepted: the
    whole statement, byte for byte (input and output ciphertexts, joint key, the
    encoded proof and the encoded context with table, game, step and seat).  A
    statement whose digest is kept is not checked again; any other statement, one
    with even one byte changed by the adversary, is checked for real.  A statement
    that failed is never kept, so a bad proof fails every time;
  - every 32-byte encoding that :meth:`crypto.group.Point.decode` accepted, with the
    point it gave (a frozen value).  An encoding not seen before is validated for
    real; one that failed is never kept;
  - every entry signature that :func:`crypto.identity.verify_signature` accepted, as the
    exact (key, signed bytes, signature) it accepted (the record's check,
    :mod:`p2p.record.chain`); any other triple is checked for real;
  - every Sigma-protocol commitment :func:`crypto.dleq.lincomb_sub` recomputed
    (``s p - c q``), and every linear combination of points the batched DLEQ check
    (``crypto.dleq._fold``) and the inequality proof (``crypto.inequality._lincomb``)
    computed, by their exact scalars and points: pure functions, so the value kept is
    the value the computation gives; one that raised is never kept.

  So the memo changes how often an honest proof is checked, never the answer: a
  seat's verdict on an entry is the one the real check gives for those exact bytes.
  What it does not test is the checking itself in every seat (the crypto tests and
  ``bench crypto`` do).

* **Seeded randomness** (:func:`seeded`).  Cards, masks, nonces' fresh entropy and
  table ids come from :mod:`secrets`; under :func:`seeded` its ``token_bytes``,
  ``randbits`` and ``randbelow`` draw from a stream fixed by the seed, so a seed
  replays a table exactly, deal included (the nonces stay hedged on the statement
  and the secret, crypto/nonces.py).  Never used outside the bench.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import secrets
from collections.abc import Iterator, Sequence
from typing import Any

from crypto import dleq, group, hand_proofs, inequality, keys, shuffle_proof_tw_batch
from p2p.record import chain

MAX_POINTS = 1 << 20
MAX_STATEMENTS = 1 << 18
MAX_SIGNATURES = 1 << 20


class Memo:
    """Counters and the two memo tables (see the module docstring)."""

    def __init__(self) -> None:
        self.points: dict[bytes, group.Point] = {}
        self.statements: set[bytes] = set()
        self.signatures: set[bytes] = set()
        self.lincombs: dict[tuple[int, bytes, int, bytes], group.Point] = {}
        self.combos: dict[tuple[int, int, bytes], group.Point] = {}
        self.hits = 0
        self.checked = 0
        self.point_hits = 0
        self.signature_hits = 0
        self.lincomb_hits = 0

    def stats(self) -> dict[str, int]:
        return {
            "shuffle_checks": self.checked,
            "shuffle_memo_hits": self.hits,
            "point_memo_hits": self.point_hits,
            "signature_memo_hits": self.signature_hits,
            "lincomb_memo_hits": self.lincomb_hits,
        }


def statement_digest(st: Any) -> bytes:
    """The whole statement of one shuffle, every byte of it."""
    h = hashlib.sha256(b"slaiga bench memo: shuffle statement v1")
    for part in (st.inputs, st.outputs):
        h.update(len(part).to_bytes(4, "little"))
        for ct in part:
            h.update(ct.encode())
    h.update(st.joint_key.data)
    proof = st.proof.encode()
    h.update(len(proof).to_bytes(4, "little") + proof)
    ctx = st.context.encode()
    h.update(len(ctx).to_bytes(4, "little") + ctx)
    return h.digest()


_INSTALLED: list[Memo] = []


def active_memo() -> Memo | None:
    """The memo installed now (the innermost :func:`memo` block), if any."""
    return _INSTALLED[-1] if _INSTALLED else None


@contextlib.contextmanager
def memo(m: Memo | None = None) -> Iterator[Memo]:
    """Install the memo (see the module docstring) for the block."""
    m = m or Memo()
    real_batch = shuffle_proof_tw_batch._verify_batch
    real_decode = group.Point.__dict__["decode"]

    def verify_batch(statements: Sequence[Any], weights: Any, aside: Any = None) -> None:
        statements = list(statements)
        digests = []
        todo = []
        for st in statements:
            try:
                dg = statement_digest(st)
            except Exception:  # noqa: BLE001 - not a well-formed statement: the real check
                dg = None
            if dg is not None and dg in m.statements:
                m.hits += 1
                continue
            digests.append(dg)
            todo.append(st)
        if not todo and statements:
            return
        m.checked += len(todo)
        real_batch(todo or statements, weights, aside)  # raises on a bad one: nothing kept
        if len(m.statements) > MAX_STATEMENTS:
            m.statements.clear()
        m.statements.update(dg for dg in digests if dg is not None)

    def decode(cls: type, b: bytes) -> group.Point:
        if type(b) is bytes:
            p = m.points.get(b)
            if p is not None:
                m.point_hits += 1
                return p
        p = real_decode.__func__(cls, b)
        if len(m.points) > MAX_POINTS:
            m.points.clear()
        m.points[p.data] = p
        return p

    real_verify = chain.verify_signature

    def verify_signature(public: bytes, msg: bytes, sig: bytes) -> None:
        try:
            h = hashlib.sha256(b"slaiga bench memo: signature v1")
            for part in (public, sig, msg):
                h.update(len(part).to_bytes(8, "little") + part)
            key = h.digest()
        except TypeError:  # not bytes: the real check says what is wrong
            return real_verify(public, msg, sig)
        if key in m.signatures:
            m.signature_hits += 1
            return None
        real_verify(public, msg, sig)  # raises on a bad one: nothing is kept
        if len(m.signatures) > MAX_SIGNATURES:
            m.signatures.clear()
        m.signatures.add(key)
        return None

    real_lincomb = dleq.lincomb_sub

    def lincomb_sub(s: int, p: group.Point, c: int, q: group.Point) -> group.Point:
        try:
            key = (s, p.data, c, q.data)
        except AttributeError:
            return real_lincomb(s, p, c, q)
        got = m.lincombs.get(key)
        if got is not None:
            m.lincomb_hits += 1
            return got
        got = real_lincomb(s, p, c, q)  # raises on the identity: nothing is kept
        if len(m.lincombs) > MAX_POINTS:
            m.lincombs.clear()
        m.lincombs[key] = got
        return got

    real_fold = dleq._fold

    def fold(weights: Sequence[int], points: Sequence[group.Point]) -> group.Point:
        h = hashlib.sha256(b"fold")
        for w, pt in zip(weights, points, strict=False):
            h.update(w.to_bytes(64, "little") + pt.data)
        key = (len(weights), len(points), h.digest())
        got = m.combos.get(key)
        if got is not None:
            m.lincomb_hits += 1
            return got
        got = real_fold(weights, points)
        if len(m.combos) > MAX_STATEMENTS:
            m.combos.clear()
        m.combos[key] = got
        return got

    real_ineq = inequality._lincomb

    def ineq_lincomb(terms: Sequence[tuple[int, group.Point]], what: str) -> group.Point:
        h = hashlib.sha256(b"lincomb")
        for k, pt in terms:
            h.update(k.to_bytes(64, "little") + pt.data)
        key = (-1, len(terms), h.digest())
        got = m.combos.get(key)
        if got is not None:
            m.lincomb_hits += 1
            return got
        got = real_ineq(terms, what)
        if len(m.combos) > MAX_STATEMENTS:
            m.combos.clear()
        m.combos[key] = got
        return got

    dleq._fold = fold  # type: ignore[assignment]
    inequality._lincomb = ineq_lincomb  # type: ignore[assignment]
    lincomb_users = (dleq, hand_proofs, keys)
    shuffle_proof_tw_batch._verify_batch = verify_batch
    group.Point.decode = classmethod(decode)  # type: ignore[assignment]
    chain.verify_signature = verify_signature  # type: ignore[assignment]
    for mod in lincomb_users:
        mod.lincomb_sub = lincomb_sub  # type: ignore[attr-defined]
    _INSTALLED.append(m)
    try:
        yield m
    finally:
        _INSTALLED.remove(m)
        shuffle_proof_tw_batch._verify_batch = real_batch
        group.Point.decode = real_decode  # type: ignore[assignment]
        chain.verify_signature = real_verify  # type: ignore[assignment]
        for mod in lincomb_users:
            mod.lincomb_sub = real_lincomb  # type: ignore[attr-defined]
        dleq._fold = real_fold  # type: ignore[assignment]
        inequality._lincomb = real_ineq  # type: ignore[assignment]


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[random.Random]:
    """Draw :mod:`secrets`' randomness from a stream fixed by ``seed`` for the block."""
    rng = random.Random(f"slaiga bench seeded randomness {seed}")
    saved = (secrets.token_bytes, secrets.randbits, secrets.randbelow)

    def token_bytes(n: int | None = None) -> bytes:
        return rng.randbytes(32 if n is None else n)

    def randbelow(n: int) -> int:
        if n <= 0:
            raise ValueError("Upper bound must be positive.")
        return rng.randrange(n)

    secrets.token_bytes = token_bytes  # type: ignore[assignment]
    secrets.randbits = rng.getrandbits  # type: ignore[assignment]
    secrets.randbelow = randbelow  # type: ignore[assignment]
    try:
        yield rng
    finally:
        secrets.token_bytes, secrets.randbits, secrets.randbelow = saved  # type: ignore[assignment]
