#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""crit: read and write criu image files with nothing but the standard library.

The message layouts come from the images/*.proto files themselves, parsed
here (the proto2 subset they use), and the protobuf wire format is decoded
generically, so no protobuf package and no generated code is needed.

    crit.py decode -i mm-1234.img [--full]      the image as JSON
    crit.py encode -i mm.json -o mm-1234.img    JSON (as decode prints it) to an image
    crit.py show DIR                            a summary of a checkpoint

An image file is a 32-bit magic, a 32-bit length, the CRC32C of those 8
bytes and the message, and one message of that length (all little endian),
except the raw stores (pages-PID.img, ...): raw pages, laid out as
pagemap-PID.img says, whose checksums inventory.img holds.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Union

# The repository's root, for images/*.proto: test/zdtm/buildpaths.py says
# where it is, for all the Python of the tree.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "test" / "zdtm"))
from buildpaths import ROOT  # noqa: E402

PAGE_SIZE = 4096
FMT_VERSION = 2
HEADER = struct.Struct("<III")      # magic, length, CRC32C


def _crc32c_table() -> list[int]:
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        out.append(c)
    return out


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC32C (Castagnoli), chained as criu's: crc32c(b, crc32c(a)) covers a + b."""
    c = crc ^ 0xFFFFFFFF
    tab = _CRC_TABLE
    for b in data:
        c = (c >> 8) ^ tab[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


def frame_sum(magic: int, body: bytes) -> int:
    """The checksum of a frame: over magic and length, then the message."""
    return crc32c(body, crc32c(struct.pack("<II", magic, len(body))))
# Bytes fields longer than this are shown cut, unless --full.
BYTES_SHOWN = 32


class CritError(Exception):
    """Anything wrong with an image or a .proto: reported without a traceback."""


# ----------------------------------------------------------------- images

@dataclass(frozen=True)
class ImageKind:
    name: str           # also the file name's prefix
    pattern: str        # file name; %d is a pid
    magic: int          # 0: raw, no framing
    message: Optional[str]


def default_proto_dir() -> Path:
    env = os.environ.get("CRIT_PROTO_DIR")
    if env:
        return Path(env)
    return ROOT / "images"


# A line of the registry, images/kinds.def: KIND or IMAGE (name, NAME, nr,
# file, magic, message), RAW (name, NAME, nr, file); PART lines name no image.
_REGISTRY_LINE = re.compile(r"^(KIND|IMAGE|RAW)\(([^)]*)\)", re.M)


def read_registry(path: Path) -> list[ImageKind]:
    """The image kinds of the registry criu is built from, by number."""
    try:
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    except OSError as err:
        raise CritError(f"can't read the registry of image kinds: {err}") from None
    kinds: dict[int, ImageKind] = {}
    for m in _REGISTRY_LINE.finditer(text):
        f = [x.strip() for x in m.group(2).split(",")]
        if len(f) != (4 if m.group(1) == "RAW" else 6):
            raise CritError(f"{path}: can't read {m.group(0)}")
        raw = m.group(1) == "RAW"
        kinds[int(f[2])] = ImageKind(f[0], f[3].strip('"'), 0 if raw else int(f[4], 0),
                                     None if raw else f[5])
    return [kinds[nr] for nr in sorted(kinds)]


# In criu's order (enum img_type), from the registry beside the .proto files.
IMAGES: list[ImageKind] = read_registry(default_proto_dir() / "kinds.def")
BY_NAME = {k.name: k for k in IMAGES}
BY_MAGIC = {k.magic: k for k in IMAGES if k.magic}


def kind_of_file(path: Union[str, Path]) -> tuple[Optional[ImageKind], Optional[int]]:
    """The image kind and pid a file name stands for, or (None, None)."""
    base = os.path.basename(str(path))
    for k in IMAGES:
        rx = "^" + re.escape(k.pattern).replace("%d", "([0-9]+)") + "$"
        m = re.match(rx, base)
        if m:
            return k, int(m.group(1)) if m.groups() else None
    return None, None


# ------------------------------------------------------------ proto files

SCALARS = {
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
    "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",
}
# Wire type of each scalar; enums are varints, messages length-delimited.
WIRE_VARINT, WIRE_I64, WIRE_LEN, WIRE_SGROUP, WIRE_EGROUP, WIRE_I32 = range(6)
SCALAR_WIRE = {
    "int32": WIRE_VARINT, "int64": WIRE_VARINT, "uint32": WIRE_VARINT,
    "uint64": WIRE_VARINT, "sint32": WIRE_VARINT, "sint64": WIRE_VARINT,
    "bool": WIRE_VARINT, "fixed64": WIRE_I64, "sfixed64": WIRE_I64,
    "double": WIRE_I64, "fixed32": WIRE_I32, "sfixed32": WIRE_I32,
    "float": WIRE_I32, "string": WIRE_LEN, "bytes": WIRE_LEN,
}


@dataclass
class Field:
    name: str
    number: int
    label: str                  # required, optional, repeated
    type: str                   # a scalar, or an enum's or message's full name
    kind: str = "scalar"        # scalar, enum or message, once resolved
    packed: bool = False


@dataclass
class Message:
    name: str                   # full name: Outer.Inner for nested ones
    fields: dict[int, Field] = field(default_factory=dict)
    by_name: dict[str, Field] = field(default_factory=dict)


@dataclass
class Enum:
    name: str
    values: dict[str, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)


TOKEN = re.compile(r"""
    (?P<ws>\s+) | (?P<comment>//[^\n]*|/\*.*?\*/) |
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*') |
    (?P<number>-?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)) |
    (?P<ident>\.?[A-Za-z_][A-Za-z0-9_.]*) |
    (?P<punct>[{}\[\]()=;,<>])
""", re.VERBOSE | re.DOTALL)


def tokenize(text: str, filename: str) -> list[tuple[str, int]]:
    """(token, line) pairs, comments and blanks dropped."""
    out: list[tuple[str, int]] = []
    pos, line = 0, 1
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise CritError(f"{filename}:{line}: unexpected {text[pos]!r}")
        tok = m.group(0)
        if m.lastgroup not in ("ws", "comment"):
            out.append((tok, line))
        line += tok.count("\n")
        pos = m.end()
    return out


class ProtoParser:
    """The proto2 subset: message (nested too), enum, scalar/enum/message fields."""

    def __init__(self, text: str, filename: str) -> None:
        self.toks = tokenize(text, filename)
        self.i = 0
        self.filename = filename
        self.package = ""
        self.messages: dict[str, Message] = {}
        self.enums: dict[str, Enum] = {}

    def error(self, msg: str) -> CritError:
        line = self.toks[min(self.i, len(self.toks) - 1)][1] if self.toks else 0
        return CritError(f"{self.filename}:{line}: {msg}")

    def peek(self) -> Optional[str]:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def next(self) -> str:
        if self.i >= len(self.toks):
            raise self.error("unexpected end of file")
        self.i += 1
        return self.toks[self.i - 1][0]

    def expect(self, want: str) -> None:
        got = self.next()
        if got != want:
            raise self.error(f"expected {want!r}, got {got!r}")

    def skip_statement(self) -> None:
        while self.next() != ";":
            pass

    def parse(self) -> None:
        while self.peek() is not None:
            tok = self.next()
            if tok == "syntax":
                self.expect("=")
                syntax = self.next().strip("\"'")
                if syntax != "proto2":
                    raise self.error(f"syntax {syntax}: only proto2 is understood")
                self.expect(";")
            elif tok == "package":
                self.package = self.next()
                self.expect(";")
            elif tok in ("import", "option"):
                self.skip_statement()
            elif tok == "message":
                self.parse_message(self.package)
            elif tok == "enum":
                self.parse_enum(self.package)
            elif tok == ";":
                continue
            else:
                raise self.error(f"unsupported top-level {tok!r}")

    def qualify(self, scope: str, name: str) -> str:
        return f"{scope}.{name}" if scope else name

    def parse_enum(self, scope: str) -> None:
        e = Enum(self.qualify(scope, self.next()))
        self.expect("{")
        while (tok := self.next()) != "}":
            if tok == "option":
                self.skip_statement()
                continue
            if tok == ";":
                continue
            self.expect("=")
            value = int(self.next(), 0)
            if self.peek() == "[":
                while self.next() != "]":
                    pass
            self.expect(";")
            e.values[tok] = value
            e.names.setdefault(value, tok)
        self.define(e.name)
        self.enums[e.name] = e

    def parse_message(self, scope: str) -> None:
        msg = Message(self.qualify(scope, self.next()))
        self.expect("{")
        while (tok := self.next()) != "}":
            if tok == "message":
                self.parse_message(msg.name)
            elif tok == "enum":
                self.parse_enum(msg.name)
            elif tok in ("option", "reserved", "extensions"):
                self.skip_statement()
            elif tok == ";":
                continue
            elif tok in ("required", "optional", "repeated"):
                self.parse_field(msg, tok)
            else:
                raise self.error(f"unsupported in a message: {tok!r} "
                                 "(oneof, map and groups are not understood)")
        self.define(msg.name)
        self.messages[msg.name] = msg

    def define(self, name: str) -> None:
        if name in self.messages or name in self.enums:
            raise self.error(f"{name} is defined twice")

    def parse_field(self, msg: Message, label: str) -> None:
        ftype = self.next()
        if ftype == "group":
            raise self.error("groups are not supported")
        name = self.next()
        self.expect("=")
        number = int(self.next(), 0)
        packed = False
        if self.peek() == "[":
            self.next()
            while True:
                opt = self.next()
                self.expect("=")
                val = self.next()
                if opt == "packed":
                    packed = val == "true"
                sep = self.next()
                if sep == "]":
                    break
                if sep != ",":
                    raise self.error(f"expected ',' or ']' in field options, got {sep!r}")
        self.expect(";")
        if number in msg.fields or name in msg.by_name:
            raise self.error(f"{msg.name}: field {name} = {number} defined twice")
        f = Field(name, number, label, ftype, packed=packed)
        msg.fields[number] = f
        msg.by_name[name] = f


class Schema:
    """Every message and enum of a set of .proto files, with types resolved."""

    def __init__(self) -> None:
        self.messages: dict[str, Message] = {}
        self.enums: dict[str, Enum] = {}

    @classmethod
    def load_dir(cls, proto_dir: Union[str, Path]) -> "Schema":
        files = sorted(Path(proto_dir).glob("*.proto"))
        if not files:
            raise CritError(f"no .proto files in {proto_dir}")
        schema = cls()
        for f in files:
            schema.add(f.read_text(), str(f))
        schema.resolve()
        return schema

    def add(self, text: str, filename: str = "<proto>") -> None:
        p = ProtoParser(text, filename)
        p.parse()
        for name in list(p.messages) + list(p.enums):
            if name in self.messages or name in self.enums:
                raise CritError(f"{filename}: {name} is defined twice")
        self.messages.update(p.messages)
        self.enums.update(p.enums)

    def lookup(self, scope: str, name: str) -> Optional[str]:
        """Protobuf scoping: innermost scope first, then outwards."""
        if name.startswith("."):
            name = name[1:]
            return name if name in self.messages or name in self.enums else None
        parts = scope.split(".") if scope else []
        while True:
            cand = ".".join(parts + [name])
            if cand in self.messages or cand in self.enums:
                return cand
            if not parts:
                return None
            parts.pop()

    def resolve(self) -> None:
        for msg in self.messages.values():
            for f in msg.fields.values():
                if f.type in SCALARS:
                    if f.packed and f.type in ("string", "bytes"):
                        raise CritError(f"{msg.name}.{f.name}: {f.type} can't be packed")
                    continue
                full = self.lookup(msg.name, f.type)
                if full is None:
                    raise CritError(f"{msg.name}.{f.name}: unknown type {f.type}")
                f.type = full
                f.kind = "message" if full in self.messages else "enum"
                if f.packed and f.kind == "message":
                    raise CritError(f"{msg.name}.{f.name}: messages can't be packed")

    def message(self, name: str) -> Message:
        if name not in self.messages:
            raise CritError(f"no message {name} in the .proto files")
        return self.messages[name]


# -------------------------------------------------------------- wire format

class Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def error(self, msg: str) -> CritError:
        return CritError(f"{self.what}: {msg} at byte {self.pos} of {len(self.data)}")

    def varint(self) -> int:
        value = shift = 0
        start = self.pos
        while True:
            if self.pos >= len(self.data):
                self.pos = start
                raise self.error("varint runs past the end")
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value & 0xFFFFFFFFFFFFFFFF
            shift += 7
            if shift >= 70:
                self.pos = start
                raise self.error("varint longer than 10 bytes")

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.error(f"{n} bytes announced, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def done(self) -> bool:
        return self.pos >= len(self.data)


def to_signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def unzigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def scalar_from_varint(ftype: str, v: int) -> Any:
    if ftype == "uint64":
        return v
    if ftype == "uint32":
        return v & 0xFFFFFFFF
    if ftype == "int64":
        return to_signed(v, 64)
    if ftype == "int32":
        return to_signed(v, 32)
    if ftype == "sint64":
        return unzigzag(v)
    if ftype == "sint32":
        return to_signed(unzigzag(v & 0xFFFFFFFF), 32)
    if ftype == "bool":
        return v != 0
    raise AssertionError(ftype)


def scalar_from_fixed(ftype: str, raw: bytes) -> Any:
    fmt = {"fixed32": "<I", "sfixed32": "<i", "float": "<f",
           "fixed64": "<Q", "sfixed64": "<q", "double": "<d"}[ftype]
    return struct.unpack(fmt, raw)[0]


def read_raw(number: int, wire: int, r: Reader) -> Union[int, bytes]:
    """The value of field @number without a schema: a varint's number, the
    bytes of the others."""
    if wire == WIRE_VARINT:
        return r.varint()
    if wire == WIRE_I64:
        return r.take(8)
    if wire == WIRE_I32:
        return r.take(4)
    if wire == WIRE_LEN:
        return r.take(r.varint())
    raise r.error(f"field {number}: wire type {wire} is not supported")


def raw_fields(data: bytes, what: str = "message") -> list[list[Any]]:
    """A message without a schema: [number, wire type, value] of each field
    in file order, values as read_raw() gives them (for tests that forge
    images field by field; put_raw_fields() writes them back)."""
    r = Reader(data, what)
    out: list[list[Any]] = []
    while not r.done():
        key = r.varint()
        out.append([key >> 3, key & 7, read_raw(key >> 3, key & 7, r)])
    return out


def show_bytes(raw: bytes, full: bool) -> str:
    """Hex; long values cut (with their length) unless @full."""
    if full or len(raw) <= BYTES_SHOWN:
        return raw.hex()
    return f"{raw[:BYTES_SHOWN].hex()}... ({len(raw)} bytes)"


@dataclass
class Decoder:
    schema: Schema
    full_bytes: bool = False

    def value(self, f: Field, wire: int, r: Reader, what: str) -> Iterator[Any]:
        """The value(s) of one occurrence of @f: several for a packed run."""
        if f.kind == "message":
            if wire != WIRE_LEN:
                raise r.error(f"{what}: message field with wire type {wire}")
            sub = Reader(r.take(r.varint()), what)
            yield self.message(f.type, sub)
            return
        base_wire = WIRE_VARINT if f.kind == "enum" else SCALAR_WIRE[f.type]
        if wire == WIRE_LEN and base_wire != WIRE_LEN:
            if f.label != "repeated":
                raise r.error(f"{what}: packed data for a non-repeated field")
            packed = Reader(r.take(r.varint()), what)
            while not packed.done():
                yield self.single(f, base_wire, packed, what)
            return
        if wire != base_wire:
            raise r.error(f"{what}: wire type {wire}, {f.type} needs {base_wire}")
        yield self.single(f, wire, r, what)

    def single(self, f: Field, wire: int, r: Reader, what: str) -> Any:
        if f.kind == "enum":
            v = to_signed(r.varint(), 32)
            return self.schema.enums[f.type].names.get(v, v)
        if wire == WIRE_VARINT:
            return scalar_from_varint(f.type, r.varint())
        if wire == WIRE_I64:
            return scalar_from_fixed(f.type, r.take(8))
        if wire == WIRE_I32:
            return scalar_from_fixed(f.type, r.take(4))
        raw = r.take(r.varint())
        if f.type == "string":
            return raw.decode("utf-8", "surrogateescape")
        return show_bytes(raw, self.full_bytes)

    def unknown(self, number: int, wire: int, r: Reader) -> dict[str, Any]:
        v = read_raw(number, wire, r)
        return {"field": number, "wire": wire,
                "value": v.hex() if isinstance(v, bytes) else v}

    def message(self, name: str, r: Reader) -> dict[str, Any]:
        msg = self.schema.message(name)
        got: dict[int, Any] = {}
        unknown: list[dict[str, Any]] = []
        while not r.done():
            key = r.varint()
            number, wire = key >> 3, key & 7
            if number == 0 or number > 0x1FFFFFFF:
                raise r.error(f"{name}: field number {number}")
            f = msg.fields.get(number)
            if f is None:
                unknown.append(self.unknown(number, wire, r))
                continue
            what = f"{name}.{f.name}"
            for v in self.value(f, wire, r, what):
                if f.label == "repeated":
                    got.setdefault(number, []).append(v)
                elif f.kind == "message" and number in got:
                    got[number] = merge(got[number], v)
                else:
                    got[number] = v     # the last one wins
        out: dict[str, Any] = {}
        for number in sorted(msg.fields):
            f = msg.fields[number]
            if number in got:
                out[f.name] = got[number]
            elif f.label == "required":
                raise CritError(f"{r.what}: {name}: required field {f.name} is missing")
        if unknown:
            out["_unknown"] = unknown
        return out


def merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A non-repeated message field seen twice: protobuf merges the two."""
    out = dict(old)
    for k, v in new.items():
        if isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = out[k] + v
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def decode_message(schema: Schema, name: str, data: bytes, full_bytes: bool = False,
                   what: str = "message") -> dict[str, Any]:
    return Decoder(schema, full_bytes).message(name, Reader(data, what))


# ----------------------------------------------------------------- encoding

def put_varint(v: int) -> bytes:
    v &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def put_raw(number: int, wire: int, v: Union[int, bytes]) -> Optional[bytes]:
    """Field @number as read_raw() gave it; None when @v does not fit @wire."""
    key = put_varint(number << 3 | wire)
    if wire == WIRE_VARINT and isinstance(v, int):
        return key + put_varint(v)
    if not isinstance(v, bytes):
        return None
    if wire == WIRE_LEN:
        return key + put_varint(len(v)) + v
    if (wire, len(v)) in ((WIRE_I64, 8), (WIRE_I32, 4)):
        return key + v
    return None


def put_raw_fields(fields: list[list[Any]]) -> bytes:
    """raw_fields()'s list back to a message."""
    out = bytearray()
    for number, wire, v in fields:
        raw = put_raw(number, wire, v)
        if raw is None:
            raise CritError(f"field {number}: {v!r} does not fit wire type {wire}")
        out += raw
    return bytes(out)


INT_RANGE = {
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
    "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
    "sint32": (-2**31, 2**31 - 1), "sint64": (-2**63, 2**63 - 1),
    "fixed32": (0, 2**32 - 1), "fixed64": (0, 2**64 - 1),
    "sfixed32": (-2**31, 2**31 - 1), "sfixed64": (-2**63, 2**63 - 1),
}


@dataclass
class Encoder:
    schema: Schema

    def scalar(self, f: Field, v: Any, what: str) -> bytes:
        if f.kind == "enum":
            e = self.schema.enums[f.type]
            if isinstance(v, str):
                if v not in e.values:
                    raise CritError(f"{what}: {v!r} is not a value of {e.name}")
                v = e.values[v]
            if not isinstance(v, int) or isinstance(v, bool) or not -2**31 <= v < 2**31:
                raise CritError(f"{what}: bad enum value {v!r}")
            return put_varint(v)
        t = f.type
        if t == "bool":
            if not isinstance(v, bool):
                raise CritError(f"{what}: want true or false, got {v!r}")
            return put_varint(int(v))
        if t in ("float", "double"):
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise CritError(f"{what}: want a number, got {v!r}")
            return struct.pack("<f" if t == "float" else "<d", v)
        if t == "string":
            if not isinstance(v, str):
                raise CritError(f"{what}: want a string, got {v!r}")
            raw = v.encode("utf-8", "surrogateescape")
            return put_varint(len(raw)) + raw
        if t == "bytes":
            if not isinstance(v, str) or not re.fullmatch(r"(?:[0-9a-fA-F]{2})*", v):
                raise CritError(f"{what}: want a full hex string (decode with --full), "
                                f"got {str(v)[:60]!r}")
            raw = bytes.fromhex(v)
            return put_varint(len(raw)) + raw
        lo, hi = INT_RANGE[t]
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise CritError(f"{what}: {v!r} is not a {t}")
        if t in ("sint32", "sint64"):
            return put_varint((v << 1) ^ (v >> 63))
        if t in ("fixed32", "sfixed32", "fixed64", "sfixed64"):
            fmt = {"fixed32": "<I", "sfixed32": "<i", "fixed64": "<Q", "sfixed64": "<q"}[t]
            return struct.pack(fmt, v)
        return put_varint(v)

    def one(self, f: Field, v: Any, what: str) -> bytes:
        if f.kind == "message":
            body = self.message(f.type, v, what)
            return put_varint(f.number << 3 | WIRE_LEN) + put_varint(len(body)) + body
        wire = WIRE_VARINT if f.kind == "enum" else SCALAR_WIRE[f.type]
        return put_varint(f.number << 3 | wire) + self.scalar(f, v, what)

    def message(self, name: str, obj: Any, what: str = "") -> bytes:
        what = what or name
        msg = self.schema.message(name)
        if not isinstance(obj, dict):
            raise CritError(f"{what}: want an object for {name}, got {type(obj).__name__}")
        for k in obj:
            if k != "_unknown" and k not in msg.by_name:
                raise CritError(f"{what}: {name} has no field {k!r}")
        out = bytearray()
        for number in sorted(msg.fields):
            f = msg.fields[number]
            sub = f"{what}.{f.name}"
            if f.name not in obj:
                if f.label == "required":
                    raise CritError(f"{what}: required field {f.name} is missing")
                continue
            v = obj[f.name]
            if f.label != "repeated":
                out += self.one(f, v, sub)
                continue
            if not isinstance(v, list):
                raise CritError(f"{sub}: want a list")
            if f.packed and v:
                body = b"".join(self.scalar(f, x, sub) for x in v)
                out += put_varint(number << 3 | WIRE_LEN) + put_varint(len(body)) + body
            else:
                for i, x in enumerate(v):
                    out += self.one(f, x, f"{sub}[{i}]")
        for u in obj.get("_unknown", []):
            out += self.unknown(u, what)
        return bytes(out)

    def unknown(self, u: Any, what: str) -> bytes:
        try:
            number, wire, v = u["field"], u["wire"], u["value"]
            out = put_raw(number, wire, v if wire == WIRE_VARINT else bytes.fromhex(v))
            if out is not None:
                return out
        except (KeyError, TypeError, ValueError):
            pass
        raise CritError(f"{what}: bad _unknown entry {u!r}")


def encode_message(schema: Schema, name: str, obj: Any) -> bytes:
    return Encoder(schema).message(name, obj)


# ------------------------------------------------------------- image files

_schemas: dict[str, Schema] = {}


def load_schema(proto_dir: Optional[Union[str, Path]] = None) -> Schema:
    key = str(proto_dir or default_proto_dir())
    if key not in _schemas:
        _schemas[key] = Schema.load_dir(key)
    return _schemas[key]


# stats-dump and stats-restore (images/stats.proto): CRIU's layout, two
# magics and a length, no checksum, as the clients that read them expect
STATS_HEADER = struct.Struct("<III")
STATS_MAGICS = (0x55105940, 0x57093306)
STATS_FILES = ("stats-dump", "stats-restore")


def decode_stats(data: bytes, name: str, schema: Schema) -> dict[str, Any]:
    """A stats file's bytes to a dict: its stats_entry, with "dump" or
    "restore" in it."""
    if len(data) < STATS_HEADER.size:
        raise CritError(f"{name} is truncated: {len(data)} bytes, no header")
    m0, m1, length = STATS_HEADER.unpack_from(data)
    if (m0, m1) != STATS_MAGICS:
        raise CritError(f"{name}: not a stats file (magics {m0:#x} {m1:#x})")
    body = len(data) - STATS_HEADER.size
    if length != body:
        raise CritError(f"{name} is {'truncated' if length > body else 'corrupted'}: "
                        f"message of {length} bytes in a {len(data)}-byte file")
    entry = decode_message(schema, "stats_entry", data[STATS_HEADER.size:], False, name)
    return {"image": "stats", "message": "stats_entry", "entry": entry}


def decode_image(data: bytes, name: str = "image", schema: Optional[Schema] = None,
                 full_bytes: bool = False, check: bool = True) -> dict[str, Any]:
    """One image file's bytes to a dict; checks as strict as criu's reader
    (check=False: the checksum is not checked). The stats files too."""
    schema = schema or load_schema()
    if os.path.basename(name) in STATS_FILES or data[:8] == struct.pack("<II", *STATS_MAGICS):
        return decode_stats(data, name, schema)
    by_name, _ = kind_of_file(name)
    if by_name is not None and not by_name.magic:
        return {"image": by_name.name, "size": len(data), "pages": len(data) // PAGE_SIZE,
                "whole_pages": len(data) % PAGE_SIZE == 0}
    if len(data) < HEADER.size:
        raise CritError(f"{name} is truncated: {len(data)} bytes, no header")
    magic, length, csum = HEADER.unpack_from(data)
    kind = BY_MAGIC.get(magic)
    if kind is None:
        raise CritError(f"{name}: unknown magic {magic:#x}")
    if by_name is not None and by_name is not kind:
        raise CritError(f"{name}: the magic of a {kind.name} image in a {by_name.name} file")
    if length != len(data) - HEADER.size:
        if length == len(data) - 8:
            raise CritError(f"{name} is framed as in format version 1 (no checksum); "
                            f"this crit reads version {FMT_VERSION}")
        state = "truncated" if length > len(data) - HEADER.size else "corrupted"
        raise CritError(f"{name} is {state}: message of {length} bytes in a "
                        f"{len(data)}-byte file")
    got = frame_sum(magic, data[HEADER.size:])
    if check and got != csum:
        raise CritError(f"{name} is corrupted: its checksum is {csum:#x}, its bytes sum "
                        f"to {got:#x}")
    assert kind.message
    entry = decode_message(schema, kind.message, data[HEADER.size:], full_bytes, name)
    return {"image": kind.name, "magic": f"{magic:#010x}", "message": kind.message,
            "entry": entry}


def encode_image(doc: dict[str, Any], schema: Optional[Schema] = None) -> bytes:
    """The inverse of decode_image (for framed images)."""
    schema = schema or load_schema()
    kind = BY_NAME.get(doc.get("image", ""))
    if kind is None or not kind.magic or not kind.message:
        raise CritError(f"can't encode image kind {doc.get('image')!r}")
    if "entry" not in doc:
        raise CritError("no 'entry' to encode")
    body = encode_message(schema, kind.message, doc["entry"])
    return HEADER.pack(kind.magic, len(body), frame_sum(kind.magic, body)) + body


def read_image(path: Union[str, Path], schema: Optional[Schema] = None,
               full_bytes: bool = False, check: bool = True) -> dict[str, Any]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise CritError(f"can't read {p}: {e.strerror}") from None
    return decode_image(data, p.name, schema, full_bytes, check)


# -------------------------------------------------------------------- show

PROT = ((1, "r"), (2, "w"), (4, "x"))
O_FLAGS = ((0o2000, "O_APPEND"), (0o4000, "O_NONBLOCK"), (0o40000, "O_DIRECT"),
           (0o100000, "O_LARGEFILE"), (0o200000, "O_DIRECTORY"), (0o1000000, "O_NOATIME"),
           (0o10000000, "O_PATH"))
O_SYNC, O_DSYNC = 0o4010000, 0o10000


def prot_str(prot: int) -> str:
    return "".join(c if prot & bit else "-" for bit, c in PROT)


def open_flags_str(flags: int) -> str:
    out = [("O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE")[flags & 3]]
    out += [name for bit, name in O_FLAGS if flags & bit]
    if flags & O_SYNC == O_SYNC:
        out.append("O_SYNC")
    elif flags & O_DSYNC:
        out.append("O_DSYNC")
    return "|".join(out)


def ns_str(ns: int) -> str:
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 10**9}.{ns % 10**9:09d} s"


def sigset_str(mask: int) -> str:
    sigs = [str(i + 1) for i in range(64) if mask >> i & 1]
    return ",".join(sigs) if sigs else "none"


class Checkpoint:
    """A checkpoint directory, its images decoded on demand."""

    def __init__(self, path: Union[str, Path], schema: Optional[Schema] = None) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise CritError(f"{self.path} is not a directory")
        self.schema = schema or load_schema()

    def image(self, kind: str, pid: Optional[int] = None) -> Optional[dict[str, Any]]:
        """The entry of an image, None when it does not exist."""
        k = BY_NAME[kind]
        name = k.pattern % pid if "%d" in k.pattern else k.pattern
        p = self.path / name
        if not p.exists():
            return None
        return read_image(p, self.schema)["entry"]

    def pages_size(self, pid: int) -> Optional[int]:
        p = self.path / (BY_NAME["pages"].pattern % pid)
        return p.stat().st_size if p.exists() else None

    def tasks(self) -> list[dict[str, Any]]:
        pstree = self.image("pstree")
        if pstree is not None:
            return pstree.get("tasks", [])
        # no pstree: whatever per-task images there are
        pids = sorted({pid for f in self.path.iterdir()
                       for k, pid in [kind_of_file(f)] if k and pid is not None})
        return [{"pid": pid} for pid in pids]


def printable(text: str) -> str:
    """Text from images as criu logs it: control characters (C0, DEL, C1)
    as \\xHH, so a crafted path can't drive the terminal."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 else c
                   for c in text)


def show(path: Union[str, Path], out: Any = sys.stdout) -> None:
    ck = Checkpoint(path)
    w = lambda s="": print(printable(s), file=out)  # noqa: E731

    w(f"checkpoint {ck.path}")
    inv = ck.image("inventory")
    if inv is None:
        w("  no inventory.img: not a checkpoint, or an incomplete one")
    else:
        line = f"  format {inv['fmt_version']}"
        if inv["fmt_version"] != FMT_VERSION:
            line += f" (this crit knows {FMT_VERSION})"
        if "criu_version" in inv:
            line += f", written by criu {inv['criu_version']}"
        line += f", root pid {inv['root_pid']}"
        if "ntasks" in inv:
            line += f", {inv['ntasks']} task(s)"
        if "page_size" in inv:
            line += f", page size {inv['page_size']}"
        w(line)
        stores = inv.get("stores", [])
        if inv.get("store_checksums"):
            w(f"  checksums of {len(stores)} raw store(s): "
              + ", ".join(f"{c['name']} ({len(c.get('crc32c', []))} x "
                          f"{c['chunk_size'] >> 10} KiB)" for c in stores))
        else:
            w("  the raw stores have no checksums (dumped with --skip-checksum)")
        if "dump_realtime_ns" in inv:
            when = datetime.datetime.fromtimestamp(inv["dump_realtime_ns"] / 1e9,
                                                   datetime.timezone.utc)
            w(f"  dumped at {when.isoformat(timespec='milliseconds')}")

    tn = ck.image("timens")
    if tn is not None:
        w("clocks at the dump (timens.img)")
        w(f"  monotonic {ns_str(tn['monotonic_ns'])}, boottime {ns_str(tn['boottime_ns'])}")
        if "host_monotonic_ns" in tn or "host_boottime_ns" in tn:
            w(f"  host: monotonic {ns_str(tn.get('host_monotonic_ns', 0))}, "
              f"boottime {ns_str(tn.get('host_boottime_ns', 0))}")
        if "realtime_ns" in tn:
            w(f"  realtime {ns_str(tn['realtime_ns'])}")
        for n in tn.get("nss", []):
            w(f"  time namespace {n['id']}: monotonic {ns_str(n['monotonic_ns'])}, "
              f"boottime {ns_str(n['boottime_ns'])}")
        for t in tn.get("tasks", []):
            if t["ns"] != t["ns_for_children"]:
                w(f"  task {t['pid']} in namespace {t['ns']}, "
                  f"its children in {t['ns_for_children']}")

    cpu = ck.image("cpuinfo")
    if cpu is not None:
        w(f"cpu: {cpu['vendor']} family {cpu['family']} model {cpu['model']} "
          f"stepping {cpu['stepping']}, xfeatures {cpu['xfeatures']:#x}, "
          f"xsave {cpu['xsave_size']} bytes"
          + (f", x86-64-v{cpu['x86_64_level']}" if cpu.get("x86_64_level") else "")
          + (f" ({cpu['model_name']})" if cpu.get("model_name") else ""))
    tasks = ck.tasks()
    root_cpu = ck.image("cpu", tasks[0]["pid"]) if tasks else None
    if root_cpu and root_cpu.get("ns_cpus"):
        ns = root_cpu["ns_cpus"]
        w(f"cpu namespace: virtual CPUs 0-{len(ns) - 1} ran on CPUs "
          + ",".join(str(c) for c in ns))

    for t in ck.tasks():
        show_task(ck, t, w)


STOP_SIGNALS = {19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU"}


def task_state(t: dict[str, Any]) -> str:
    """A pstree_task's zombie or stopped state and pending SIGCHLD, in words."""
    out = []
    if t.get("zombie"):
        out.append(f"zombie, wait status {t.get('exit_code', 0):#x}")
    if t.get("stopped"):
        sig = t.get("stop_signal", 19)
        out.append(f"stopped by {STOP_SIGNALS.get(sig, f'signal {sig}')}, "
                   + ("collected by its parent" if t.get("stop_waited")
                      else "not yet reported to its parent"))
    if t.get("sigchld_pending"):
        out.append("SIGCHLD pending")
    return "; ".join(out)


def show_cpu_use(cpu: Optional[dict[str, Any]], w: Any) -> None:
    """What a task may have chosen its code by (cpu_entry; Documentation/cpu.md)."""
    if cpu is None:
        return
    use = []
    if cpu.get("cpu_mask"):
        use.append(f"glibc.cpu.hwcaps={cpu['cpu_mask']}")
    if cpu.get("hwcaps_level"):
        use.append(f"libraries of x86-64-v{cpu['hwcaps_level']} "
                   f"({cpu.get('hwcaps_path', '')})")
    if cpu.get("jit"):
        use.append(f"code generated at run time ({cpu['jit']})")
    if use:
        w(f"  chose its code by: {'; '.join(use)}")


def show_task(ck: Checkpoint, t: dict[str, Any], w: Any) -> None:
    pid = t["pid"]
    ids = "".join(f", {k} {t[k]}" for k in ("ppid", "pgid", "sid") if k in t)
    w(f"task {pid}{ids}")
    if t.get("threads"):
        w(f"  threads: {' '.join(str(x) for x in t['threads'])}")
    state = task_state(t)
    if state:
        w(f"  {state}")

    task = ck.image("task", pid)
    if task is not None:
        for th in task.get("threads", []):
            w(f"  thread {th['tid']}: comm {th['comm']!r}")
    regs = ck.image("regs", pid)
    if regs is not None:
        g = regs["gpregs"]
        w(f"  regs of {regs['tid']}: ip {g['ip']:#x} sp {g['sp']:#x} ax {g['ax']:#x}"
          + (" (syscall interrupted)" if regs.get("syscall_interrupted") else ""))
    show_cpu_use(ck.image("cpu", pid), w)
    uts = ck.image("uts", pid)
    if uts is not None:
        w(f"  UTS namespace of its own: host {uts['hostname']!r}, "
          f"domain {uts['domainname']!r}")
    creds = ck.image("creds", pid)
    if creds is not None:
        w(f"  creds: uid {creds['uid']}/{creds['euid']} gid {creds['gid']}/{creds['egid']}")

    show_memory(ck, pid, w)
    show_fds(ck, pid, w)

    sigact = ck.image("sigact", pid)
    if sigact is not None:
        acts = sigact.get("acts", [])
        desc = ", ".join(f"{a['sig']}:{'ign' if a['handler'] == 1 else hex(a['handler'])}"
                         for a in acts)
        w(f"  signal handlers: {desc or 'all default'}")
    sig = ck.image("signal", pid)
    if sig is not None:
        for th in sig.get("threads", []):
            w(f"  thread {th['tid']}: blocked {sigset_str(th['blocked'])}, "
              f"{len(th.get('pending', []))} pending")
        if sig.get("shared_pending"):
            w(f"  shared pending signals: {len(sig['shared_pending'])}")
    pt = ck.image("posix_timer", pid)
    if pt is not None:
        timers = pt.get("timers", [])
        w(f"  posix timers: {len(timers) or 'none'}")
        for x in timers:
            w(f"    id {x['id']} clock {x['clockid']}: next {ns_str(x['value_ns'])}, "
              f"every {ns_str(x['interval_ns'])}, signal {x['signo']}")
    it = ck.image("itimer", pid)
    if it is not None:
        armed = [f"{k} {ns_str(v['value_ns'])} every {ns_str(v['interval_ns'])}"
                 for k, v in it.items() if isinstance(v, dict) and v.get("value_ns")]
        w(f"  itimers: {'; '.join(armed) or 'none armed'}")


def show_memory(ck: Checkpoint, pid: int, w: Any) -> None:
    mm = ck.image("mm", pid)
    if mm is None:
        return
    pm = ck.image("pagemap", pid) or {"pages_size": 0}
    runs = pm.get("runs", [])
    vmas = mm.get("vmas", [])
    size = ck.pages_size(pid)
    saved = sum(r["nr_pages"] for r in runs)
    w(f"  memory: {len(vmas)} areas, {saved} pages saved in {len(runs)} runs "
      f"({saved * PAGE_SIZE} bytes; pages-{pid}.img has "
      f"{'none' if size is None else size})")
    if "exe_path" in mm:
        w(f"  exe {mm['exe_path']}")
    w(f"  brk {mm['start_brk']:#x}-{mm['brk']:#x}, stack {mm['start_stack']:#x}")
    for v in vmas:
        n = sum(r["nr_pages"] for r in runs if v["start"] <= r["vaddr"] < v["end"])
        kind = v["kind"].lower().replace("vma_", "") if isinstance(v["kind"], str) \
            else str(v["kind"])
        path = v.get("path", "")
        off = f" +{v['pgoff']:#x}" if v.get("pgoff") else ""
        w(f"    {v['start']:012x}-{v['end']:012x} {prot_str(v['prot'])} "
          f"{kind:<13} {n:6d} {path}{off}".rstrip())


def file_extra(f: dict[str, Any]) -> str:
    """What is special about a pipe, socket, eventfd, epoll, signalfd, inotify."""
    if "pipe" in f:
        p = f["pipe"]
        data = p.get("data", "")
        return (f", {'FIFO' if p.get('fifo') else 'pipe'} {p['pipe_id']}, {p['size']} bytes"
                + (f", data {data}" if data else ""))
    if "usk" in f:
        u = f["usk"]
        return (f", unix type {u['type']}, socket {u['ino']} peer {u['peer'] or 'closed'}, "
                f"{len(u.get('queue', []))} queued")
    if "efd" in f:
        return f", count {f['efd']['count']}{' semaphore' if f['efd'].get('semaphore') else ''}"
    if "sfd" in f:
        return f", mask {f['sfd']['sigmask']:#x}"
    if "epoll" in f:
        e = f["epoll"]
        tfds = ", ".join(f"fd {t['tfd']} events {t['events']:#x}" for t in e.get("tfds", []))
        return f", owner {e['owner']}: {tfds or 'no watches'}"
    if "inotify" in f:
        wds = ", ".join(f"wd {x['wd']} {x['path']} {x['mask']:#x}"
                        for x in f["inotify"].get("wds", []))
        return f": {wds or 'no watches'}"
    if "pidfd" in f:
        p = f["pidfd"]
        return (f", of {p['pid'] or 'a reaped process'}{' (thread)' if p.get('thread') else ''}"
                f", made by {p.get('holder', '?')} at fd {p.get('holder_fd', '?')}")
    return ""


def fown_str(f: dict[str, Any]) -> str:
    """Who gets the file's signals (file_desc fown), or ""."""
    o = f.get("fown")
    if not o:
        return ""
    who = ("thread", "process", "group")[o["pid_type"]] if o["pid_type"] < 3 else "?"
    return (f", signals to {who} {o['pid']}" if o["pid"] else ", no owner") + \
        (f" with {o['signum']}" if o["signum"] else "") + (", O_ASYNC" if o.get("async") else "")


def show_locks(ck: Checkpoint, pid: int, w: Any) -> None:
    """The file locks task @pid takes again (file-lock.img)."""
    for lk in (ck.image("file_lock") or {}).get("locks", []):
        if lk["pid"] != pid:
            continue
        rng = f" bytes {lk.get('start', 0)}+{lk.get('len') or 'EOF'}" \
            if lk["kind"] in ("FL_POSIX", "FL_OFD") else ""
        w(f"    lock: {str(lk['kind']).replace('FL_', '')} {str(lk['type']).replace('FL_', '')}"
          f" on fd {lk['fd']}{rng}")


def show_fds(ck: Checkpoint, pid: int, w: Any) -> None:
    fi = ck.image("fdinfo", pid)
    if fi is None:
        return
    # the descriptions are the tree's, in files.img
    files = {f["id"]: f for f in (ck.image("files") or {}).get("files", [])}
    w(f"  fds: {len(fi.get('fds', []))}")
    for fd in fi.get("fds", []):
        f = files.get(fd["file_id"])
        if f is None:
            w(f"    {fd['fd']}: file {fd['file_id']} is not in the image")
            continue
        kind = f["kind"].lower().replace("file_", "") if isinstance(f["kind"], str) \
            else str(f["kind"])
        extra = ""
        if "tfd" in f:
            tfd = f["tfd"]
            extra = (f", clock {tfd['clockid']}, next {ns_str(tfd['value_ns'])} "
                     f"every {ns_str(tfd['interval_ns'])}, {tfd['ticks']} unread")
        extra += file_extra(f) + fown_str(f)
        w(f"    {fd['fd']}: {f['path']} ({kind}, {open_flags_str(f['flags'])}, "
          f"pos {f['pos']}{', cloexec' if fd.get('cloexec') else ''}{extra})")
    show_locks(ck, pid, w)


# --------------------------------------------------------------------- cli

def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="crit", description=__doc__.split("\n\n")[0])
    ap.add_argument("--proto-dir", help="the images/*.proto files (default: the "
                    "source tree's, or $CRIT_PROTO_DIR)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("decode", help="an image as JSON")
    d.add_argument("-i", "--in", dest="input", required=True)
    d.add_argument("-o", "--out", dest="output")
    d.add_argument("--full", action="store_true", help="bytes fields in full")
    d.add_argument("--compact", action="store_true", help="JSON on one line")
    d.add_argument("--skip-checksum", action="store_true",
                   help="decode even when the checksum does not match")
    e = sub.add_parser("encode", help="JSON (as decode --full prints it) to an image")
    e.add_argument("-i", "--in", dest="input", required=True)
    e.add_argument("-o", "--out", dest="output", required=True)
    s = sub.add_parser("show", help="a summary of a checkpoint directory")
    s.add_argument("dir")
    args = ap.parse_args(argv)

    try:
        schema = load_schema(args.proto_dir)
        if args.cmd == "decode":
            doc = read_image(args.input, schema, args.full, not args.skip_checksum)
            text = json.dumps(doc, indent=None if args.compact else 2) + "\n"
            if args.output:
                Path(args.output).write_text(text)
            else:
                sys.stdout.write(text)
        elif args.cmd == "encode":
            try:
                doc = json.loads(Path(args.input).read_text())
            except (OSError, ValueError) as err:
                raise CritError(f"can't read {args.input}: {err}") from None
            data = encode_image(doc, schema)
            fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        else:
            show(args.dir)
    except CritError as err:
        print(f"crit: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
