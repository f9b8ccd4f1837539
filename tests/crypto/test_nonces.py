"""Hedged prover randomness (crypto.nonces) and the shape of the public crypto API.

A nonce reused across two statements gives away the secret: ``x = (s - s') /
(c - c')``.  These tests make a prover reuse the same test seed for two
different statements and check that the extraction fails, and that no public
crypto function offers a raw nonce, weight or ephemeral-key parameter.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import crypto
from crypto.elgamal import mask
from crypto.errors import InvalidEncoding, InvalidScalar
from crypto.group import L, base_mul, hash_to_point, random_scalar
from crypto.keys import make_key_share, verify_key_share
from crypto.nonces import NonceStream
from crypto.reveal import make_token, verify_token
from crypto.transcript import Context

CTX = Context(b"nonce-table", 1, 2, 0)
SEED = b"the same seed, passed twice"
BANNED = {"w", "seed", "nonce_seed", "ephemeral_private", "nonce_seeds", "weights_seed"}


def _extract(s1: int, c1: int, s2: int, c2: int) -> int:
    """The secret, *if* both responses came from one nonce: (s1 - s2) / (c1 - c2)."""
    return (s1 - s2) * pow((c1 - c2) % L, -1, L) % L


def test_a_repeated_test_seed_does_not_leak_a_key_share():
    x = random_scalar()
    a = make_key_share(CTX, x, insecure_test_seed=SEED)
    b = make_key_share(CTX.with_step(3), x, insecure_test_seed=SEED)
    verify_key_share(a, CTX)
    verify_key_share(b, CTX.with_step(3))
    assert a.proof.c != b.proof.c
    assert _extract(a.proof.s, a.proof.c, b.proof.s, b.proof.c) != x
    # the same statement and seed repeat the whole proof, which reveals nothing new
    assert make_key_share(CTX, x, insecure_test_seed=SEED) == a


def test_a_repeated_test_seed_does_not_leak_through_reveal_tokens():
    x = random_scalar()
    pub = base_mul(x)
    joint = base_mul(random_scalar())
    ct1, _ = mask(hash_to_point(b"card", b"1"), joint)
    ct2, _ = mask(hash_to_point(b"card", b"2"), joint)
    t1 = make_token(x, pub, ct1, CTX, insecure_test_seed=SEED)
    t2 = make_token(x, pub, ct2, CTX, insecure_test_seed=SEED)
    verify_token(pub, ct1, t1, CTX)
    verify_token(pub, ct2, t2, CTX)
    assert _extract(t1.proof.s, t1.proof.c, t2.proof.s, t2.proof.c) != x


def test_fresh_randomness_differs_and_streams_are_bound_to_every_input():
    assert NonceStream("a")() != NonceStream("a")()
    base = {"public": (b"p",), "secret": (b"s",), "insecure_test_seed": b"t"}
    first = NonceStream("a", **base)()
    assert NonceStream("a", **base)() == first
    for change in (
        {"public": (b"q",)},
        {"secret": (b"r",)},
        {"insecure_test_seed": b"u"},
        {"public": (b"p", b"")},  # a part count is bound too
    ):
        assert NonceStream("a", **{**base, **change})() != first
    assert NonceStream("b", **base)() != first


def test_below_is_in_range_and_checks_its_bound():
    stream = NonceStream("below", insecure_test_seed=b"x")
    seen = {stream.below(3) for _ in range(200)}
    assert seen == {0, 1, 2}
    for bad in (0, -1, 2**600):
        with pytest.raises(InvalidScalar):
            stream.below(bad)
    with pytest.raises(InvalidEncoding):
        NonceStream("")
    with pytest.raises(InvalidEncoding):
        NonceStream("a", secret=("text",))  # type: ignore[arg-type]


def test_no_public_crypto_function_takes_a_raw_nonce_seed_or_ephemeral_key():
    """Randomness hooks are keyword-only ``insecure_test_seed`` (hedged) or private."""
    offenders = []
    for info in pkgutil.iter_modules(crypto.__path__):
        module = importlib.import_module(f"crypto.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            functions = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                functions = [
                    f for n, f in vars(obj).items() if inspect.isfunction(f) and n[0] != "_"
                ]
            for fn in functions:
                for p in inspect.signature(fn).parameters.values():
                    if p.name in BANNED:
                        offenders.append(f"{module.__name__}.{fn.__qualname__}({p.name})")
                    if p.name == "insecure_test_seed" and p.kind is not p.KEYWORD_ONLY:
                        offenders.append(f"{module.__name__}.{fn.__qualname__} positional seed")
    assert not offenders, offenders
