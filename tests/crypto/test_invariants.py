"""Source-level guards for rules that hold across the whole crypto package.

These read the code of :mod:`crypto` with :mod:`ast` and fail when a future edit
breaks a project-wide rule that a behavioural test would only catch where it
happens to look:

* scalar multiplication is never clamped: only the ``_noclamp`` libsodium
  entry points (and the other group primitives the design names) are used;
* ``verify*`` functions return nothing: they raise, never ``return False``;
* the package does no I/O and uses no global randomness (no ``random``, no
  sockets, files, clocks or printing) and imports nothing of ours but itself.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

CRYPTO = pathlib.Path(__file__).parents[2] / "crypto"
MODULES = sorted(CRYPTO.glob("*.py"))

ALLOWED_SODIUM = {
    "crypto_scalarmult_ed25519_noclamp",
    "crypto_scalarmult_ed25519_base_noclamp",
    "crypto_core_ed25519_add",
    "crypto_core_ed25519_sub",
    "crypto_core_ed25519_from_uniform",
    "crypto_core_ed25519_is_valid_point",
}
SIGNATURE_SODIUM = {"identity": {"crypto_sign_open"}}
"""Entry points that are not group primitives, per module: Ed25519 signature checks (no
scalar multiplication of ours, no secret key) in ``crypto/identity.py`` only."""
FORBIDDEN_IMPORTS = {
    "random",
    "socket",
    "time",
    "os",
    "io",
    "pathlib",
    "subprocess",
    "asyncio",
    "trio",
    "engine",
    "p2p",
    "cli",
    "bench",
}
FORBIDDEN_CALLS = {"print", "open", "input"}


def _tree(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def test_the_scan_sees_the_package():
    names = {p.stem for p in MODULES}
    assert {"group", "dleq", "hand_proofs", "shuffle_proof_tw", "shuffle_proof_cc"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_only_unclamped_group_primitives(path):
    """Every libsodium entry point used is one of the unclamped group primitives (or, in
    the identity module alone, the signature check)."""
    tree = _tree(path)
    allowed = ALLOWED_SODIUM | SIGNATURE_SODIUM.get(path.stem, set())
    sodium_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("nacl.bindings"):
                    sodium_aliases.add(a.asname or a.name)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nacl.bindings"):
            for a in node.names:
                assert a.name in allowed, f"{path.name} imports {a.name}"
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in sodium_aliases
        ):
            assert node.attr in allowed, f"{path.name} uses sodium {node.attr}"
        if isinstance(node, ast.Attribute | ast.Name):
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if name.startswith("crypto_scalarmult"):
                assert name.endswith("_noclamp"), f"{path.name} uses clamped {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_verify_functions_never_return_a_value(path):
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_").startswith("verify"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return):
                    assert inner.value is None or (
                        isinstance(inner.value, ast.Constant) and inner.value.value is None
                    ), f"{path.name}:{inner.lineno} {node.name} returns a value"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_no_io_no_global_randomness_no_foreign_imports(path):
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for a in node.names:
                assert a.name.split(".")[0] not in FORBIDDEN_IMPORTS, f"{path.name}: {a.name}"
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            top = (node.module or "").split(".")[0]
            assert top not in FORBIDDEN_IMPORTS, f"{path.name}: from {node.module}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} {node.func.id}"
