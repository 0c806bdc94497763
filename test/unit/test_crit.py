# SPDX-License-Identifier: GPL-2.0-only
"""Tests of contrib/crit/crit.py: its .proto parser, its wire decoder and
encoder, its image table (read from the registry criu is built from), and the images of a
real dump by the criu the build made (found as test/zdtm/buildpaths.py
says: CRIU, or BUILD_DIR/criu/criu); a dump that fails is a failure."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

# test/zdtm holds the modules the tests share
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "zdtm"))

import buildpaths  # noqa: E402
from buildpaths import CRIT, ROOT  # noqa: E402
from reap import become_subreaper, proc_state, reap_leftovers  # noqa: E402

sys.path.insert(0, str(CRIT.parent))
import crit  # noqa: E402

SEEDS = ROOT / "test" / "fuzz" / "seeds"
CRIU = buildpaths.criu()


@pytest.fixture(scope="module")
def schema() -> crit.Schema:
    return crit.load_schema(ROOT / "images")


def run_crit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CRIT), *args], capture_output=True,
                          text=True, timeout=60)


# ------------------------------------------------------ the registry of kinds

def test_registry_in_number_order(tmp_path: Path) -> None:
    reg = tmp_path / "kinds.def"
    reg.write_text('/* IMAGE(x, X, 9, "x.img", 1, x) */\n'
                   'RAW(b, B, 1, "b-%d.img")\n'
                   'PART(p, P)\n'
                   'KIND(a, A, 0, "a.img", 0x10, a_entry) /* its own */\n')
    got = crit.read_registry(reg)
    assert got == [crit.ImageKind("a", "a.img", 0x10, "a_entry"),
                   crit.ImageKind("b", "b-%d.img", 0, None)]
    reg.write_text('IMAGE(a, A, 0, "a.img")\n')
    with pytest.raises(crit.CritError, match="can't read IMAGE"):
        crit.read_registry(reg)


def test_table_messages_exist(schema: crit.Schema) -> None:
    for k in crit.IMAGES:
        if k.message:
            assert k.message in schema.messages, k.message


def test_kind_of_file() -> None:
    assert crit.kind_of_file("/x/mm-123.img") == (crit.BY_NAME["mm"], 123)
    assert crit.kind_of_file("inventory.img") == (crit.BY_NAME["inventory"], None)
    assert crit.kind_of_file("pages-1.img") == (crit.BY_NAME["pages"], 1)
    assert crit.kind_of_file("pagemap-1.img")[0] is crit.BY_NAME["pagemap"]
    assert crit.kind_of_file("mm-x.img") == (None, None)
    assert crit.kind_of_file("dump.log") == (None, None)


# ------------------------------------------------------------- proto parser

def test_schema_of_the_tree(schema: crit.Schema) -> None:
    regs = schema.message("user_regs_x86")
    assert len(regs.fields) == 27
    assert [f.number for f in regs.fields.values()] == list(range(1, 28))
    vma = schema.message("vma_entry")
    assert vma.by_name["kind"].kind == "enum" and vma.by_name["kind"].type == "vma_kind"
    assert vma.by_name["file_mtime_ns"].type == "int64"
    mm = schema.message("mm_entry")
    assert mm.by_name["vmas"].kind == "message" and mm.by_name["vmas"].label == "repeated"
    assert schema.enums["vma_kind"].values["VMA_VSYSCALL"] == 8
    assert schema.enums["file_kind"].names[2] == "FILE_CHR"
    # every message field of every .proto resolved to something known
    for m in schema.messages.values():
        for f in m.fields.values():
            assert f.type in crit.SCALARS or f.type in schema.messages or f.type in schema.enums


PROTO_FEATURES = """
syntax = "proto2";
// a line comment
/* a block
   comment */
package pkg;
import "other.proto";
option java_package = "x";

enum color { RED = 1; GREEN = 2; ALIAS = 2; NEG = -3; }

message outer {
    message inner {
        enum mode { A = 0; B = 5; }
        optional mode m = 1;
        optional sint64 z = 2;
    }
    required inner in = 1;
    repeated inner ins = 2;
    repeated uint64 packed_vals = 3 [packed = true];
    repeated int32 plain_vals = 4;
    optional color c = 5 [default = RED];
    optional fixed32 f32 = 6;
    optional sfixed64 sf64 = 7;
    optional double d = 8;
    optional float fl = 9;
    optional bytes b = 10;
    optional string s = 11;
    optional sint32 z32 = 12;
    reserved 13, 14;
    optional .pkg.color c2 = 15;
}
"""


def features_schema() -> crit.Schema:
    s = crit.Schema()
    s.add(PROTO_FEATURES, "features.proto")
    s.resolve()
    return s


def test_proto_features() -> None:
    s = features_schema()
    outer = s.message("pkg.outer")
    assert outer.by_name["in"].type == "pkg.outer.inner"
    assert outer.by_name["in"].kind == "message"
    assert s.message("pkg.outer.inner").by_name["m"].type == "pkg.outer.inner.mode"
    assert outer.by_name["packed_vals"].packed
    assert not outer.by_name["plain_vals"].packed
    assert outer.by_name["c"].type == "pkg.color"
    assert outer.by_name["c2"].type == "pkg.color"
    assert s.enums["pkg.color"].names[2] == "GREEN"     # the first name of a value
    assert s.enums["pkg.color"].values["NEG"] == -3


@pytest.mark.parametrize("text, err", [
    ('syntax = "proto3"; message m { }', "proto3"),
    ("message m { oneof x { uint32 a = 1; } }", "oneof"),
    ("message m { map<string, uint32> x = 1; }", "map"),
    ("message m { optional nothing x = 1; }", "unknown type"),
    ("message m { optional uint32 x = 1; optional uint32 y = 1; }", "twice"),
    ("message m { optional uint32 x = 1 }", "expected ';'"),
    ("message m { optional uint32 x = 1;", "end of file"),
    ("message m { optional string x = 1 [packed = true]; }", "packed"),
    ("message m { } message m { }", "twice"),
    ("message m { optional uint32 x = 1; } $", "unexpected"),
])
def test_proto_errors(text: str, err: str) -> None:
    s = crit.Schema()
    with pytest.raises(crit.CritError, match=re.escape(err)):
        s.add(text, "bad.proto")
        s.resolve()


# ------------------------------------------------------------- wire format

def varint(v: int) -> bytes:
    return crit.put_varint(v)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def test_decode_scalars() -> None:
    s = features_schema()
    data = (key(1, 2) + varint(4) + key(1, 0) + varint(5) + key(2, 0) + varint(3)
            + key(3, 2) + varint(3) + varint(1) + varint(300)[:2]   # packed [1, 300]
            + key(4, 0) + varint(-1)                                  # 10-byte varint
            + key(4, 0) + varint(7)
            + key(5, 0) + varint(2)
            + key(6, 5) + struct.pack("<I", 0xdeadbeef)
            + key(7, 1) + struct.pack("<q", -2)
            + key(8, 1) + struct.pack("<d", 1.5)
            + key(9, 5) + struct.pack("<f", -0.25)
            + key(10, 2) + varint(3) + b"\x00\xff\x10"
            + key(11, 2) + varint(6) + "héllo".encode()
            + key(12, 0) + varint(3))
    got = crit.decode_message(s, "pkg.outer", data)
    assert got == {
        "in": {"m": "B", "z": -2},
        "packed_vals": [1, 300],
        "plain_vals": [-1, 7],
        "c": "GREEN",
        "f32": 0xdeadbeef,
        "sf64": -2,
        "d": 1.5,
        "fl": -0.25,
        "b": "00ff10",
        "s": "héllo",
        "z32": -2,
    }
    assert len(varint(-1)) == 10


def test_decode_repeated_packed_or_not() -> None:
    """A reader must take both encodings of a repeated number field."""
    s = features_schema()
    inner = key(1, 0) + varint(0)
    base = key(1, 2) + varint(len(inner)) + inner
    packed = base + key(3, 2) + varint(2) + varint(5) + varint(6)
    unpacked = base + key(3, 0) + varint(5) + key(3, 0) + varint(6)
    mixed = base + key(3, 0) + varint(5) + key(3, 2) + varint(1) + varint(6)
    for data in (packed, unpacked, mixed):
        assert crit.decode_message(s, "pkg.outer", data)["packed_vals"] == [5, 6]
    plain = base + key(4, 2) + varint(2) + varint(1) + varint(2)
    assert crit.decode_message(s, "pkg.outer", plain)["plain_vals"] == [1, 2]


def test_decode_last_wins_and_merge() -> None:
    s = features_schema()
    a = key(1, 0) + varint(5)
    b = key(2, 0) + varint(1)
    data = (key(1, 2) + varint(len(a)) + a + key(1, 2) + varint(len(b)) + b
            + key(11, 2) + varint(1) + b"x" + key(11, 2) + varint(1) + b"y")
    got = crit.decode_message(s, "pkg.outer", data)
    assert got["in"] == {"m": "B", "z": -1}     # two copies of a message merge
    assert got["s"] == "y"                      # a scalar: the last one wins


def test_decode_unknown_fields_and_enum_values() -> None:
    s = features_schema()
    inner = key(1, 0) + varint(99)              # 99 is no value of mode
    data = (key(1, 2) + varint(len(inner)) + inner + key(100, 0) + varint(42)
            + key(101, 2) + varint(2) + b"ab" + key(102, 5) + b"1234"
            + key(103, 1) + b"12345678")
    got = crit.decode_message(s, "pkg.outer", data)
    assert got["in"] == {"m": 99}
    assert got["_unknown"] == [
        {"field": 100, "wire": 0, "value": 42},
        {"field": 101, "wire": 2, "value": "6162"},
        {"field": 102, "wire": 5, "value": "31323334"},
        {"field": 103, "wire": 1, "value": "3132333435363738"},
    ]
    # unknown fields survive a re-encoding
    assert crit.encode_message(s, "pkg.outer", got) == data


def test_raw_fields() -> None:
    """A message without a schema, field by field, and back to its bytes."""
    inner = key(1, 0) + varint(5)
    data = (key(1, 2) + varint(len(inner)) + inner + key(100, 0) + varint(2**64 - 1)
            + key(102, 5) + b"1234" + key(103, 1) + b"12345678" + key(100, 0) + varint(0))
    fields = crit.raw_fields(data)
    assert fields == [[1, 2, inner], [100, 0, 2**64 - 1], [102, 5, b"1234"],
                      [103, 1, b"12345678"], [100, 0, 0]]
    assert crit.raw_fields(fields[0][2]) == [[1, 0, 5]]
    assert crit.put_raw_fields(fields) == data
    fields[1][2] = 7
    assert crit.raw_fields(crit.put_raw_fields(fields))[1] == [100, 0, 7]
    with pytest.raises(crit.CritError, match="field 9: wire type 3 is not supported"):
        crit.raw_fields(key(9, 3))
    with pytest.raises(crit.CritError, match="4 bytes announced, 2 left"):
        crit.raw_fields(key(1, 2) + varint(4) + b"ab")
    with pytest.raises(crit.CritError, match="does not fit wire type 5"):
        crit.put_raw_fields([[102, 5, b"123"]])


@pytest.mark.parametrize("data, err", [
    (b"", "required field in is missing"),
    (key(1, 2) + varint(5) + b"\x08", "announced"),
    (key(1, 2) + b"\x80", "varint runs past the end"),
    (b"\xff" * 11, "longer than 10 bytes"),
    (key(1, 0) + varint(1), "wire type 0"),
    (key(0, 0) + varint(1), "field number 0"),
    (key(5, 1) + b"12345678", "wire type 1"),
    (key(50, 3), "wire type 3"),
    (key(50, 7), "wire type 7"),
    (key(11, 2) + varint(1 << 40), "announced"),
    (key(6, 5) + b"12", "announced"),
])
def test_decode_errors(data: bytes, err: str) -> None:
    s = features_schema()
    with pytest.raises(crit.CritError, match=re.escape(err)):
        crit.decode_message(s, "pkg.outer", data)


def test_decode_bytes_cut_unless_full() -> None:
    s = features_schema()
    inner = key(1, 0) + varint(0)
    raw = bytes(range(200))
    data = key(1, 2) + varint(len(inner)) + inner + key(10, 2) + varint(len(raw)) + raw
    short = crit.decode_message(s, "pkg.outer", data)["b"]
    assert short.startswith(raw[:crit.BYTES_SHOWN].hex()) and "(200 bytes)" in short
    assert crit.decode_message(s, "pkg.outer", data, full_bytes=True)["b"] == raw.hex()
    with pytest.raises(crit.CritError, match="full hex"):
        crit.encode_message(s, "pkg.outer", {"in": {}, "b": short})


@pytest.mark.parametrize("obj, err", [
    ({}, "required field in is missing"),
    ({"in": {}, "nope": 1}, "no field 'nope'"),
    ({"in": {}, "f32": -1}, "not a fixed32"),
    ({"in": {}, "plain_vals": [2**31]}, "not a int32"),
    ({"in": {}, "plain_vals": 3}, "want a list"),
    ({"in": {}, "c": "BLUE"}, "not a value"),
    ({"in": {}, "s": 5}, "want a string"),
    ({"in": []}, "want an object"),
    ({"in": {"m": True}}, "bad enum value"),
])
def test_encode_errors(obj: dict[str, Any], err: str) -> None:
    with pytest.raises(crit.CritError, match=re.escape(err)):
        crit.encode_message(features_schema(), "pkg.outer", obj)


def random_value(schema: crit.Schema, f: crit.Field, rnd: random.Random, depth: int) -> Any:
    if f.kind == "message":
        return random_message(schema, f.type, rnd, depth + 1)
    if f.kind == "enum":
        return rnd.choice(list(schema.enums[f.type].values))
    t = f.type
    if t == "bool":
        return rnd.random() < 0.5
    if t == "string":
        return rnd.choice(["", "/usr/bin/sleep", "a b (deleted)", "ünï", "x" * 300])
    if t == "bytes":
        return bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 1, 16, 128]))).hex()
    if t in ("float", "double"):
        return rnd.choice([0.0, 1.5, -2.25])
    lo, hi = crit.INT_RANGE[t]
    return rnd.choice([lo, hi, 0, 1, 127, 128, max(lo, -1), rnd.randint(lo, hi)])


def random_message(schema: crit.Schema, name: str, rnd: random.Random,
                   depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in schema.message(name).fields.values():
        if f.label == "repeated":
            n = rnd.choice([0, 1, 3]) if depth < 3 else 0
            if n:
                out[f.name] = [random_value(schema, f, rnd, depth) for _ in range(n)]
        elif f.label == "required" or rnd.random() < 0.6:
            out[f.name] = random_value(schema, f, rnd, depth)
    return out


def test_roundtrip_random_messages(schema: crit.Schema) -> None:
    rnd = random.Random(1234)
    for kind in crit.IMAGES:
        if not kind.message:
            continue
        for _ in range(40):
            obj = random_message(schema, kind.message, rnd)
            doc = {"image": kind.name, "entry": obj}
            data = crit.encode_image(doc, schema)
            back = crit.decode_image(data, kind.pattern.replace("%d", "1"), schema,
                                     full_bytes=True)
            assert back["entry"] == obj, kind.name
            assert crit.encode_image(back, schema) == data


# ------------------------------------------------------------ image framing

def frame(kind: str, body: bytes, magic: int | None = None,
          length: int | None = None) -> bytes:
    k = crit.BY_NAME[kind]
    m = k.magic if magic is None else magic
    n = len(body) if length is None else length
    csum = crit.crc32c(body, crit.crc32c(struct.pack("<II", m, n)))
    return struct.pack("<III", m, n, csum) + body


def test_crc32c() -> None:
    """The CRC32C check value, and chaining as criu's crc32c() does."""
    assert crit.crc32c(b"123456789") == 0xE3069283
    assert crit.crc32c(b"6789", crit.crc32c(b"12345")) == 0xE3069283
    assert crit.crc32c(bytes(32)) == 0x8A9136AA


def test_image_checksum(schema: crit.Schema) -> None:
    """Any flipped byte of a frame is refused; --skip-checksum decodes anyway."""
    # cwd "/ab", root "/", umask 022
    good = frame("fs", b"\x0a\x03/ab\x12\x01/\x18\x12")
    assert crit.decode_image(good, "fs-1.img", schema)["entry"]["cwd"] == "/ab"
    for i in range(len(good)):
        bad = bytearray(good)
        bad[i] ^= 0x01
        with pytest.raises(crit.CritError):
            crit.decode_image(bytes(bad), "fs-1.img", schema)
    bad = bytearray(good)
    bad[-7] ^= 0x01             # "/ab" -> "/`b"
    with pytest.raises(crit.CritError, match="its checksum is"):
        crit.decode_image(bytes(bad), "fs-1.img", schema)
    doc = crit.decode_image(bytes(bad), "fs-1.img", schema, check=False)
    assert doc["entry"]["cwd"] == "/`b"


def test_printable() -> None:
    """What show prints of image text: control characters escaped."""
    assert crit.printable("/a\x1b[31m\x07\r\x9bé") == "/a\\x1b[31m\\x07\\x0d\\x9bé"


def test_image_version1(schema: crit.Schema) -> None:
    """A frame of format version 1 (no checksum) is named as such."""
    old = struct.pack("<II", crit.BY_NAME["fs"].magic, 5) + bytes([0x0A, 3]) + b"/ab"
    with pytest.raises(crit.CritError, match="format version 1"):
        crit.decode_image(old, "fs-1.img", schema)


@pytest.mark.parametrize("data, name, err", [
    (b"", "pstree.img", "truncated: 0 bytes"),
    (b"\x30\x30\x27", "pstree.img", "truncated: 3 bytes"),
    (frame("pstree", b"", magic=0x12345678), "pstree.img", "unknown magic 0x12345678"),
    (frame("mm", b""), "pstree.img", "magic of a mm image in a pstree file"),
    (frame("pstree", b"", length=1), "pstree.img", "is truncated"),
    (frame("pstree", b"\x00", length=0), "pstree.img", "is corrupted"),
    (frame("inventory", b""), "inventory.img", "required field fmt_version"),
])
def test_image_errors(schema: crit.Schema, data: bytes, name: str, err: str) -> None:
    with pytest.raises(crit.CritError, match=re.escape(err)):
        crit.decode_image(data, name, schema)


def test_image_by_magic_only(schema: crit.Schema) -> None:
    """A renamed image is still recognised by its magic."""
    doc = crit.decode_image(frame("pstree", b""), "copy.bin", schema)
    assert doc["image"] == "pstree" and doc["entry"] == {}


def test_pages_image(schema: crit.Schema) -> None:
    doc = crit.decode_image(b"\0" * 8192, "pages-5.img", schema)
    assert doc == {"image": "pages", "size": 8192, "pages": 2, "whole_pages": True}


def test_fuzz_seeds_encode(schema: crit.Schema) -> None:
    """The fuzz target's hand-made seeds: one valid image of every kind."""
    kinds = set()
    for f in sorted(SEEDS.glob("*.json")):
        doc = json.loads(f.read_text())
        data = crit.encode_image(doc, schema)
        k = crit.BY_NAME[doc["image"]]
        back = crit.decode_image(data, k.pattern.replace("%d", "1"), schema, True)
        assert back["entry"] == doc["entry"], f.name
        kinds.add(doc["image"])
    assert kinds == {k.name for k in crit.IMAGES if k.magic}


# ------------------------------------------------------------- a real dump

class Dump:
    def __init__(self, pid: int, path: Path) -> None:
        self.pid = pid
        self.path = path

    def img(self, kind: str) -> Path:
        k = crit.BY_NAME[kind]
        return self.path / (k.pattern % self.pid if "%d" in k.pattern else k.pattern)

    def entry(self, kind: str) -> dict[str, Any]:
        return crit.read_image(self.img(kind))["entry"]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dump]:
    why = buildpaths.missing_criu()
    if why:
        pytest.fail(why)
    become_subreaper()
    d = tmp_path_factory.mktemp("crit-dump")
    task = subprocess.Popen(["sleep", "1000"], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=True)
    try:
        deadline = time.monotonic() + 10
        while proc_state(task.pid) != "S" and time.monotonic() < deadline:
            time.sleep(0.01)
        res = subprocess.run([str(CRIU), "dump", "-t", str(task.pid), "-D", str(d),
                              "-o", "dump.log"], capture_output=True, text=True,
                             timeout=120)
        if res.returncode != 0:
            log = (d / "dump.log").read_text() if (d / "dump.log").exists() else ""
            pytest.fail(f"criu dump of sleep {task.pid} failed ({res.returncode}): "
                        f"{res.stderr.strip()}\n--- tail of {d / 'dump.log'}:\n"
                        f"{log[-1500:]}")
        yield Dump(task.pid, d)
    finally:
        if task.poll() is None:
            task.send_signal(signal.SIGKILL)
        task.wait(timeout=10)
        reap_leftovers()


def test_dump_every_image_decodes_and_reencodes(dump: Dump) -> None:
    """Decoding then encoding gives protobuf-c's very bytes back."""
    seen = set()
    for f in sorted(dump.path.glob("*.img")):
        kind, _ = crit.kind_of_file(f)
        assert kind is not None, f"unknown image {f.name}"
        seen.add(kind.name)
        doc = crit.read_image(f, full_bytes=True)
        if kind.magic:
            assert crit.encode_image(doc) == f.read_bytes(), f.name
        assert f.stat().st_mode & 0o777 == 0o600, f"{f.name} is not 0600"
    assert {"inventory", "pstree", "mm", "pagemap", "pages", "regs"} <= seen


def test_dump_inventory_and_pstree(dump: Dump) -> None:
    inv = dump.entry("inventory")
    assert inv["fmt_version"] == crit.FMT_VERSION
    assert inv["root_pid"] == dump.pid
    assert inv.get("page_size", crit.PAGE_SIZE) == crit.PAGE_SIZE
    tasks = dump.entry("pstree")["tasks"]
    assert [t["pid"] for t in tasks] == [dump.pid]
    t = tasks[0]
    assert t["sid"] == dump.pid and t["pgid"] == dump.pid     # a session leader
    assert t["ppid"] == os.getpid()
    assert t["threads"] == [dump.pid]


def test_dump_mm(dump: Dump) -> None:
    mm = dump.entry("mm")
    vmas = mm["vmas"]
    assert vmas, "no areas"
    for v in vmas:
        assert v["start"] % crit.PAGE_SIZE == 0 and v["end"] % crit.PAGE_SIZE == 0, v
        assert v["start"] < v["end"], v
        assert isinstance(v["kind"], str), f"unknown area kind {v['kind']}"
        if v["kind"] in ("VMA_FILE_PRIVATE", "VMA_FILE_SHARED"):
            assert v["path"].startswith("/"), v
    for a, b in zip(vmas, vmas[1:]):
        assert a["end"] <= b["start"], "areas out of order or overlapping"
    kinds = {v["kind"] for v in vmas}
    assert "VMA_VDSO" in kinds and "VMA_ANON_PRIVATE" in kinds
    assert mm["exe_path"].endswith("/sleep")
    assert mm["start_code"] < mm["end_code"]
    assert mm["start_brk"] <= mm["brk"]
    assert mm["arg_start"] < mm["arg_end"] <= mm["env_start"] < mm["env_end"]


def test_dump_pages(dump: Dump) -> None:
    pm = dump.entry("pagemap")
    vmas = dump.entry("mm")["vmas"]
    runs = pm.get("runs", [])
    total = sum(r["nr_pages"] for r in runs) * crit.PAGE_SIZE
    assert pm["pages_size"] == total
    assert dump.img("pages").stat().st_size == total
    for a, b in zip(runs, runs[1:]):
        assert a["vaddr"] + a["nr_pages"] * crit.PAGE_SIZE <= b["vaddr"], "runs unsorted"
    for r in runs:
        end = r["vaddr"] + r["nr_pages"] * crit.PAGE_SIZE
        assert r["vaddr"] % crit.PAGE_SIZE == 0 and r["nr_pages"] > 0
        assert any(v["start"] <= r["vaddr"] and end <= v["end"] for v in vmas), \
            f"run {r['vaddr']:#x} is outside every area"


def test_dump_regs_fds_clocks(dump: Dump) -> None:
    regs = dump.entry("regs")
    assert regs["tid"] == dump.pid
    assert regs["gpregs"]["cs"] == 0x33             # 64-bit user code segment
    vmas = dump.entry("mm")["vmas"]
    ip = regs["gpregs"]["ip"]
    assert any(v["start"] <= ip < v["end"] and v["prot"] & 4 for v in vmas)

    if dump.img("fdinfo").exists():
        fi = dump.entry("fdinfo")
        files = {f["id"]: f for f in dump.entry("files")["files"]}
        fds = {fd["fd"]: files[fd["file_id"]]["path"] for fd in fi["fds"]}
        assert fds == {0: "/dev/null", 1: "/dev/null", 2: "/dev/null"}

    if dump.img("timens").exists():
        tn = dump.entry("timens")
        assert 0 < tn["monotonic_ns"] <= time.monotonic_ns()
        assert tn["boottime_ns"] >= tn["monotonic_ns"]


def test_cli_decode(dump: Dump) -> None:
    res = run_crit("decode", "-i", str(dump.img("mm")))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["image"] == "mm" and doc["message"] == "mm_entry"
    assert doc["entry"] == dump.entry("mm")

    res = run_crit("decode", "-i", str(dump.img("regs")))
    # the XSAVE legacy region: 512 bytes, cut without --full
    fxsave = json.loads(res.stdout)["entry"].get("fxsave", "")
    assert len(fxsave) < 200 and "(512 bytes)" in fxsave


def test_cli_show(dump: Dump) -> None:
    res = run_crit("show", str(dump.path))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"root pid {dump.pid}" in out
    assert f"task {dump.pid}" in out
    for v in dump.entry("mm")["vmas"]:
        assert f"{v['start']:012x}-{v['end']:012x}" in out
    assert "monotonic" in out or not dump.img("timens").exists()
    assert "0: /dev/null" in out or not dump.img("fdinfo").exists()


def test_show_task_state(schema: crit.Schema, tmp_path: Path) -> None:
    entry = {"tasks": [
        {"pid": 10, "ppid": 1, "pgid": 10, "sid": 10, "threads": [10],
         "sigchld_pending": True},
        {"pid": 11, "ppid": 10, "pgid": 11, "sid": 10, "threads": [11],
         "stopped": True, "stop_signal": 20, "stop_waited": True},
        {"pid": 12, "ppid": 10, "pgid": 10, "sid": 10, "threads": [12],
         "stopped": True},
        {"pid": 13, "ppid": 10, "pgid": 10, "sid": 10, "threads": [13],
         "zombie": True, "exit_code": 0x100},
    ]}
    (tmp_path / "pstree.img").write_bytes(
        crit.encode_image({"image": "pstree", "entry": entry}, schema))
    res = run_crit("show", str(tmp_path))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "task 10, ppid 1, pgid 10, sid 10\n  threads: 10\n  SIGCHLD pending\n" in out
    assert "stopped by SIGTSTP, collected by its parent" in out
    assert "stopped by SIGSTOP, not yet reported to its parent" in out
    assert "zombie, wait status 0x100" in out


def test_cli_encode(dump: Dump, tmp_path: Path) -> None:
    js = tmp_path / "regs.json"
    img = tmp_path / "regs-1.img"
    assert run_crit("decode", "--full", "-i", str(dump.img("regs")), "-o", str(js)).returncode == 0
    res = run_crit("encode", "-i", str(js), "-o", str(img))
    assert res.returncode == 0, res.stderr
    assert img.read_bytes() == dump.img("regs").read_bytes()
    assert img.stat().st_mode & 0o777 == 0o600


def test_cli_errors(dump: Dump, tmp_path: Path) -> None:
    data = dump.img("mm").read_bytes()
    cut = tmp_path / "mm-1.img"
    cut.write_bytes(data[:len(data) // 2])
    res = run_crit("decode", "-i", str(cut))
    assert res.returncode == 1 and "truncated" in res.stderr
    assert "Traceback" not in res.stderr

    wrong = tmp_path / "pagemap-1.img"
    wrong.write_bytes(data)
    res = run_crit("decode", "-i", str(wrong))
    assert res.returncode == 1 and "magic of a mm image" in res.stderr

    res = run_crit("decode", "-i", str(tmp_path / "nothing.img"))
    assert res.returncode == 1 and "can't read" in res.stderr
    res = run_crit("show", str(tmp_path / "nothing"))
    assert res.returncode == 1 and "not a directory" in res.stderr


def test_dump_stats(dump: Dump) -> None:
    """stats-dump, in CRIU's layout (no image header): decoded by name and by
    its magics; a cut one is refused by name."""
    f = dump.path / "stats-dump"
    doc = crit.read_image(f)
    assert doc["message"] == "stats_entry"
    st = doc["entry"]["dump"]
    assert st["pages_written"] > 0 and st["pages_scanned"] >= st["pages_written"]
    assert "frozen_time" in st and "restore" not in doc["entry"]
    data = f.read_bytes()
    assert crit.decode_image(data, "renamed")["entry"] == doc["entry"]
    with pytest.raises(crit.CritError, match="stats-dump is truncated"):
        crit.decode_image(data[:-1], "stats-dump")
    res = run_crit("decode", "-i", str(f))
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["entry"]["dump"] == st
