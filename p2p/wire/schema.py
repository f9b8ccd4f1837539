"""Wire schema: field specs, schema-checked message classes, and their canonical bodies.

Every message class is a frozen slotted dataclass whose fields carry their
schema as ``typing.Annotated`` metadata (``Annotated[int, UInt(max=...)]``).
Building a message locally checks the schema and raises
:class:`~p2p.errors.LocalProtocolError`; decoding checks it and raises
:class:`~p2p.errors.RemoteProtocolError`.  Decoding also demands the
*canonical* encoding (exactly the bytes :func:`encode_body` would produce), so
each message has one encoding: two differing byte strings always mean two
differing messages, which is what equivocation detection relies on.

A body is one msgpack array of two items, the message type tag (str) and a
map of fields in schema order.  A nested struct is a map; a nested tagged
message (e.g. a record entry's body) is again ``[tag, map]``.

New message types are added by declaring a dataclass and decorating it with
:func:`message` (frames), :func:`body` (record entry bodies) or
:func:`table_protocol` (the protocol a table's manifest names).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Annotated, Any, ClassVar, NoReturn, TypeVar

import msgpack

from crypto.errors import CryptoError
from crypto.identity import check_identity_key
from crypto.seal import check_seal_key
from p2p.errors import LocalProtocolError, RemoteProtocolError, SchemaError

# ---------------------------------------------------------------------------
# Limits.  A 104-card Terelius-Wikstroem shuffle proof carries two decks of 104
# ElGamal ciphertexts (2 x 104 x 64 bytes) plus about six 104-long vectors of
# 32-byte points/scalars: ~35 KiB.  1 MiB leaves ample room while keeping a
# malicious length prefix from costing us more than 1 MiB of buffer.
# ---------------------------------------------------------------------------

MAX_FRAME_BYTES = 1 << 20

MAX_STR_LEN = 4096  # no string field may be longer (names, addresses, reasons)
MAX_ARRAY_LEN = 16384  # enough for vectors of 104 x several items; bounds allocation
MAX_MAP_LEN = 256  # field maps and option maps are small
MAX_EXT_LEN = 0  # we use no msgpack ext types at all: any ext is rejected
MAX_NAME_LEN = 64
MAX_ADDRESS_LEN = 256
MAX_REASON_LEN = 512
MAX_SEATS = 16
MAX_KIND_LEN = 64
MAX_OPTIONS = 64
MAX_FETCH_ENTRIES = 512

TABLE_ID_BYTES = 16
KEY_BYTES = 32
NONCE_BYTES = 32
HASH_BYTES = 32
SIGNATURE_BYTES = 64

U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1

_UNPACK_LIMITS: dict[str, Any] = {
    "max_buffer_size": MAX_FRAME_BYTES,
    "max_str_len": MAX_STR_LEN,
    "max_bin_len": MAX_FRAME_BYTES,
    "max_array_len": MAX_ARRAY_LEN,
    "max_map_len": MAX_MAP_LEN,
    "max_ext_len": MAX_EXT_LEN,
    "strict_map_key": True,
    "raw": False,
    "use_list": False,  # tuples: immutable, so frozen messages stay frozen
}


# ---------------------------------------------------------------------------
# Field specs.  Each spec checks (and normalises) a Python value and encodes it
# to plain msgpack-able data.
# ---------------------------------------------------------------------------


class Spec:
    """A field schema: ``check`` validates/normalises, ``encode`` produces msgpack data."""

    __slots__ = ()

    def check(self, value: Any, path: str) -> Any:
        raise NotImplementedError

    def encode(self, value: Any) -> Any:
        return value


def _typename(value: Any) -> str:
    return type(value).__name__


@dataclass(frozen=True, slots=True)
class UInt(Spec):
    """An unsigned integer in ``min..max`` (bool is rejected even though it is an int)."""

    max: int = U64_MAX
    min: int = 0

    def check(self, value: Any, path: str) -> int:
        if type(value) is not int:
            raise SchemaError(f"{path}: expected int, got {_typename(value)}")
        if not self.min <= value <= self.max:
            raise SchemaError(f"{path}: {value} outside {self.min}..{self.max}")
        return value


@dataclass(frozen=True, slots=True)
class Bool(Spec):
    def check(self, value: Any, path: str) -> bool:
        if type(value) is not bool:
            raise SchemaError(f"{path}: expected bool, got {_typename(value)}")
        return value


@dataclass(frozen=True, slots=True)
class Bytes(Spec):
    """A byte string, of exactly ``size`` bytes or of ``min_len..max_len`` bytes."""

    size: int | None = None
    max_len: int = MAX_FRAME_BYTES
    min_len: int = 0

    def check(self, value: Any, path: str) -> bytes:
        if type(value) is not bytes:
            raise SchemaError(f"{path}: expected bytes, got {_typename(value)}")
        if self.size is not None:
            if len(value) != self.size:
                raise SchemaError(f"{path}: expected {self.size} bytes, got {len(value)}")
        elif not self.min_len <= len(value) <= self.max_len:
            raise SchemaError(f"{path}: length {len(value)} outside {self.min_len}..{self.max_len}")
        return value


@dataclass(frozen=True, slots=True)
class StrictKey(Spec):
    """A public key that must pass ``validate`` (from :mod:`crypto`) to be received at all.

    Identity and seal keys of small order let a peer forge signatures or break
    sealing (crypto/identity.py), so they are refused where the key is read,
    in every message that carries one (handshake, join, lobby, manifest).
    """

    validate: Callable[[bytes], bytes]

    def check(self, value: Any, path: str) -> bytes:
        if type(value) is not bytes:
            raise SchemaError(f"{path}: expected bytes, got {_typename(value)}")
        try:
            return self.validate(value)
        except CryptoError as exc:
            raise SchemaError(f"{path}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Str(Spec):
    """A text string of at most ``max_len`` characters, optionally from a fixed set."""

    max_len: int = MAX_STR_LEN
    choices: frozenset[str] | None = None
    min_len: int = 0

    def check(self, value: Any, path: str) -> str:
        if type(value) is not str:
            raise SchemaError(f"{path}: expected str, got {_typename(value)}")
        if not self.min_len <= len(value) <= self.max_len:
            raise SchemaError(f"{path}: length {len(value)} outside {self.min_len}..{self.max_len}")
        if self.choices is not None and value not in self.choices:
            raise SchemaError(f"{path}: {value!r} not one of {sorted(self.choices)}")
        return value


@dataclass(frozen=True, slots=True)
class Seq(Spec):
    """A homogeneous sequence (msgpack array), normalised to a tuple."""

    item: Spec
    max_len: int = MAX_ARRAY_LEN
    min_len: int = 0

    def check(self, value: Any, path: str) -> tuple[Any, ...]:
        if type(value) not in (tuple, list):
            raise SchemaError(f"{path}: expected array, got {_typename(value)}")
        if not self.min_len <= len(value) <= self.max_len:
            raise SchemaError(f"{path}: {len(value)} items outside {self.min_len}..{self.max_len}")
        check = self.item.check
        return tuple(check(v, f"{path}[{i}]") for i, v in enumerate(value))

    def encode(self, value: Any) -> Any:
        enc = self.item.encode
        return [enc(v) for v in value]


@dataclass(frozen=True, slots=True)
class Map(Spec):
    """A map from str keys to values of one spec (e.g. table options)."""

    value: Spec
    max_len: int = MAX_OPTIONS
    key_max_len: int = MAX_KIND_LEN

    def check(self, value: Any, path: str) -> dict[str, Any]:
        if type(value) is not dict:
            raise SchemaError(f"{path}: expected map, got {_typename(value)}")
        if len(value) > self.max_len:
            raise SchemaError(f"{path}: {len(value)} entries, at most {self.max_len}")
        for k in value:
            if type(k) is not str or not 0 < len(k) <= self.key_max_len:
                raise SchemaError(f"{path}: bad key {k!r}")
        return {k: self.value.check(value[k], f"{path}[{k!r}]") for k in sorted(value)}

    def encode(self, value: Any) -> Any:
        # keys sorted: the canonical encoding of a map does not depend on insertion order
        return {k: self.value.encode(value[k]) for k in sorted(value)}


@dataclass(frozen=True, slots=True)
class OneOf(Spec):
    """A value matching any one of several scalar specs (first match wins)."""

    options: tuple[Spec, ...]

    def check(self, value: Any, path: str) -> Any:
        errors = []
        for spec in self.options:
            try:
                return spec.check(value, path)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(f"{path}: no alternative matched ({'; '.join(errors)})")


@dataclass(frozen=True, slots=True)
class Nested(Spec):
    """A nested struct (a :class:`Struct` subclass), encoded as a map."""

    cls: type

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, self.cls):
            return value  # already validated when it was built
        if type(value) is not dict:
            raise SchemaError(f"{path}: expected {self.cls.__name__} map, got {_typename(value)}")
        return _build_from_map(self.cls, value, path)

    def encode(self, value: Any) -> Any:
        return _fields_to_map(value)


@dataclass(frozen=True, slots=True)
class Tagged(Spec):
    """A nested tagged message ``[tag, map]`` whose class is a subclass of ``base``."""

    base: type

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, self.base):
            return value
        if type(value) not in (tuple, list) or len(value) != 2 or type(value[0]) is not str:
            raise SchemaError(f"{path}: expected [tag, fields], got {_typename(value)}")
        tag, content = value
        cls = _REGISTRY.get(tag)
        if cls is None or not issubclass(cls, self.base):
            raise SchemaError(f"{path}: unknown {self.base.__name__} type {tag!r}")
        if type(content) is not dict:
            raise SchemaError(f"{path}: {tag} fields must be a map, got {_typename(content)}")
        return _build_from_map(cls, content, f"{path}<{tag}>")

    def encode(self, value: Any) -> Any:
        return [value.TAG, _fields_to_map(value)]


# ---------------------------------------------------------------------------
# Schema classes and the registry
# ---------------------------------------------------------------------------


class Struct:
    """Base of every schema-checked dataclass; validates on construction.

    Subclasses are ``@dataclass(frozen=True, slots=True)`` with every field
    annotated ``Annotated[type, Spec]``.  ``FIELDS`` is filled in by
    :func:`struct`, :func:`message` or :func:`body`.
    """

    __slots__ = ()
    FIELDS: ClassVar[tuple[tuple[str, Spec], ...]] = ()
    TAG: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for name, spec in self.FIELDS:
            try:
                value = spec.check(getattr(self, name), f"{type(self).__name__}.{name}")
            except SchemaError as exc:
                raise LocalProtocolError(str(exc)) from None
            object.__setattr__(self, name, value)


class Message(Struct):
    """A top-level wire message (what a frame carries)."""

    __slots__ = ()


class Body(Struct):
    """The body of a record entry; its tag is the entry's *kind*."""

    __slots__ = ()


class TableProtocol(Struct):
    """The protocol a table's record follows after the seat order, with its parameters.

    It is a field of the signed table manifest (``[tag, fields]``), so every
    rule parameter that decides who owes what is fixed before play and can be
    read back from the record alone.  Subclasses (registered with
    :func:`table_protocol`) build the rule that takes over once the seat order is
    drawn.
    """

    __slots__ = ()

    def start(self, manifest: Any, seat_order: tuple[int, ...]) -> Any:
        """The :class:`p2p.record.order.Rule` that drives the record after the seat order."""
        raise NotImplementedError


_REGISTRY: dict[str, type[Struct]] = {}
S = TypeVar("S", bound=type)


def _collect_fields(cls: type) -> tuple[tuple[str, Spec], ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in fields(cls):
        hint = hints[f.name]
        specs = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Spec)]
        if len(specs) != 1:
            raise TypeError(f"{cls.__name__}.{f.name} needs exactly one Spec in Annotated[...]")
        out.append((f.name, specs[0]))
    return tuple(out)


def struct(cls: S) -> S:
    """Register the field schema of an untagged nested struct."""
    cls.FIELDS = _collect_fields(cls)
    return cls


def _register(tag: str, base: type) -> Callable[[S], S]:
    def deco(cls: S) -> S:
        if not issubclass(cls, base):
            raise TypeError(f"{cls.__name__} must subclass {base.__name__}")
        if tag in _REGISTRY:
            raise TypeError(f"message tag {tag!r} registered twice")
        if not 0 < len(tag) <= MAX_KIND_LEN:
            raise TypeError(f"bad tag {tag!r}")
        cls.FIELDS = _collect_fields(cls)
        cls.TAG = tag
        _REGISTRY[tag] = cls
        return cls

    return deco


def message(tag: str) -> Callable[[S], S]:
    """Class decorator: register a top-level :class:`Message` type under ``tag``."""
    return _register(tag, Message)


def body(tag: str) -> Callable[[S], S]:
    """Class decorator: register a record entry :class:`Body` type (kind) under ``tag``."""
    return _register(tag, Body)


def table_protocol(tag: str) -> Callable[[S], S]:
    """Class decorator: register a manifest :class:`TableProtocol` type under ``tag``."""
    return _register(tag, TableProtocol)


def registered(tag: str) -> type[Struct] | None:
    """The class registered under ``tag``, if any."""
    return _REGISTRY.get(tag)


_ENCODERS: dict[type, tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {}
"""Per class, each field's name and its spec's ``encode`` (``None`` where it returns the
value as it is), so that encoding a message calls no more than it must."""
_NAMES: dict[type, frozenset[str]] = {}
"""Per class, its field names (a decoded map with exactly these keys needs no search for
missing or unexpected ones)."""


def _encoders(cls: type) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    found = _ENCODERS.get(cls)
    if found is None:
        found = _ENCODERS[cls] = tuple(
            (name, None if type(spec).encode is Spec.encode else spec.encode)
            for name, spec in cls.FIELDS  # type: ignore[attr-defined]
        )
    return found


def _fields_to_map(obj: Struct) -> dict[str, Any]:
    return {
        name: getattr(obj, name) if enc is None else enc(getattr(obj, name))
        for name, enc in _encoders(type(obj))
    }


def _build_from_map(cls: type[Struct], content: dict[str, Any], path: str) -> Struct:
    """Validate a decoded field map against ``cls`` and build it without re-checking."""
    names_set = _NAMES.get(cls)
    if names_set is None:
        names_set = _NAMES[cls] = frozenset(name for name, _ in cls.FIELDS)
    if content.keys() != names_set:
        _refuse_fields(cls, content, path)
    obj = object.__new__(cls)
    for name, spec in cls.FIELDS:
        object.__setattr__(obj, name, spec.check(content[name], f"{path}.{name}"))
    return obj


def _refuse_fields(cls: type[Struct], content: dict[str, Any], path: str) -> NoReturn:
    """Raise :class:`SchemaError` naming the missing or unexpected fields of ``content``."""
    names = [name for name, _ in cls.FIELDS]
    missing = [n for n in names if n not in content]
    if missing:
        raise SchemaError(f"{path}: missing field(s) {', '.join(map(repr, missing))}")
    extra = [k for k in content if k not in names]
    raise SchemaError(f"{path}: unexpected field(s) {', '.join(map(repr, extra))}")


# ---------------------------------------------------------------------------
# Canonical bodies
# ---------------------------------------------------------------------------


def encode_body(msg: Struct) -> bytes:
    """The canonical msgpack body of a tagged message (no length prefix)."""
    if not msg.TAG:
        raise LocalProtocolError(f"{type(msg).__name__} is not a registered message type")
    return msgpack.packb([msg.TAG, _fields_to_map(msg)], use_bin_type=True)


_UNPACKB_LIMITS = {k: v for k, v in _UNPACK_LIMITS.items() if k != "max_buffer_size"}
"""The same limits for :func:`msgpack.unpackb` (which takes no buffer size: ``raw`` is one
whole frame body, already bounded by :data:`MAX_FRAME_BYTES`)."""


def _unpack(raw: bytes) -> Any:
    """The one msgpack value ``raw`` holds, under :data:`_UNPACK_LIMITS`.

    One call to :func:`msgpack.unpackb` (cheap: every frame received comes through here);
    bytes it refuses go through a streaming unpacker, for an error that says exactly what
    is wrong (truncated, trailing bytes, invalid)."""
    if len(raw) <= MAX_FRAME_BYTES:
        try:
            return msgpack.unpackb(raw, **_UNPACKB_LIMITS)
        except Exception:  # noqa: BLE001, S110 - the path below names the problem
            pass
    unpacker = msgpack.Unpacker(**_UNPACK_LIMITS)
    try:
        unpacker.feed(raw)
        value = unpacker.unpack()
    except msgpack.OutOfData:
        raise RemoteProtocolError(f"truncated msgpack in {len(raw)}-byte body") from None
    except (ValueError, TypeError, OverflowError, msgpack.UnpackException) as exc:
        raise RemoteProtocolError(f"invalid msgpack: {type(exc).__name__}: {exc}") from None
    if unpacker.tell() != len(raw):
        raise RemoteProtocolError(f"{len(raw) - unpacker.tell()} trailing bytes after message")
    return value


def decode_body(raw: bytes, base: type[Struct] = Struct) -> Struct:
    """Decode and schema-check one canonical body; ``base`` restricts the allowed classes.

    Raises :class:`RemoteProtocolError` for anything but a canonically encoded
    message of a registered type that subclasses ``base``.
    """
    value = _unpack(raw)
    if type(value) is not tuple or len(value) != 2:
        raise RemoteProtocolError(f"body must be [tag, fields], got {_typename(value)}")
    tag, content = value
    if type(tag) is not str:
        raise RemoteProtocolError(f"message tag must be str, got {_typename(tag)}")
    cls = _REGISTRY.get(tag)
    if cls is None or not issubclass(cls, base):
        what = "message" if base is Struct else base.__name__
        raise RemoteProtocolError(f"unknown {what} type {tag!r}")
    if type(content) is not dict:
        raise RemoteProtocolError(f"{tag}: fields must be a map, got {_typename(content)}")
    try:
        msg = _build_from_map(cls, content, tag)
    except SchemaError as exc:
        raise RemoteProtocolError(str(exc)) from None
    if encode_body(msg) != raw:
        raise RemoteProtocolError(f"{tag}: non-canonical encoding")
    return msg


# ---------------------------------------------------------------------------
# Common field types
# ---------------------------------------------------------------------------

TableId = Annotated[bytes, Bytes(size=TABLE_ID_BYTES)]
Key = Annotated[bytes, StrictKey(check_identity_key)]
"""An Ed25519 identity key: canonical, in the prime-order subgroup (never small order)."""
SealPublicKey = Annotated[bytes, StrictKey(check_seal_key)]
Nonce = Annotated[bytes, Bytes(size=NONCE_BYTES)]
Hash = Annotated[bytes, Bytes(size=HASH_BYTES)]
Signature = Annotated[bytes, Bytes(size=SIGNATURE_BYTES)]
Seat = Annotated[int, UInt(max=MAX_SEATS - 1)]
Step = Annotated[int, UInt(max=U64_MAX)]
U32 = Annotated[int, UInt(max=U32_MAX)]
Name = Annotated[str, Str(max_len=MAX_NAME_LEN)]
Address = Annotated[str, Str(max_len=MAX_ADDRESS_LEN)]
Blob = Annotated[bytes, Bytes(max_len=MAX_FRAME_BYTES)]
OptionValue = OneOf((Bool(), UInt(), Str(max_len=MAX_NAME_LEN)))
Options = Annotated[dict[str, Any], Map(OptionValue, max_len=MAX_OPTIONS)]
