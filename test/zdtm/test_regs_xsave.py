"""The XSAVE state in regs-PID.img, by component (Documentation/cpu.md, "The
XSAVE area"), forged to stand for what another CPU or an older criu
wrote: restore rebuilds the area in this CPU's layout, refuses what it
can't load before it creates anything, in one line naming the component,
and drops a component this CPU lacks when --cpu-cap has no fpu.
regs_avx checks its ymm registers after the restore.
Run: python3 -m pytest -q test/zdtm -k regs_xsave"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

import zdtm
from test_cpu import read_image, write_image
from test_errors import check_clean_error

import crit

pytestmark = pytest.mark.usefixtures("need_criu")

# regs_entry fields (images/regs.proto)
XSTATE, FXSAVE, XSTATE_BV, COMPONENTS = 3, 6, 7, 8
AVX, OPMASK = 2, 5             # XCR0 bits
LEGACY, HDR = 512, 64


def host_xcr0() -> int:
    flags = Path("/proc/cpuinfo").read_text()
    return 0x7 if " avx " in flags else 0x3


def regs_img(img: Path, pid: int) -> Path:
    return img / f"regs-{pid}.img"


def fields_of(path: Path) -> tuple[int, list[list[Any]]]:
    return read_image(path)


def components(f: list[list[Any]]) -> dict[int, bytes]:
    out = {}
    for fld in f:
        if fld[0] == COMPONENTS:
            c = {x[0]: x[2] for x in crit.raw_fields(fld[2])}
            out[c[1]] = c[2]
    return out


def set_bv(f: list[list[Any]], bv: int) -> None:
    for fld in f:
        if fld[0] == XSTATE_BV:
            fld[2] = bv


def bv_of(f: list[list[Any]]) -> int:
    return next(fld[2] for fld in f if fld[0] == XSTATE_BV)


def component(feature: int, data: bytes) -> list[Any]:
    return [COMPONENTS, 2, crit.put_raw_fields([[1, 0, feature], [2, 2, data]])]


def without(f: list[list[Any]], feature: int) -> list[list[Any]]:
    """@f less the component of @feature."""
    return [fld for fld in f if fld[0] != COMPONENTS or
            crit.raw_fields(fld[2])[0][2] != feature]


def xsave_offsets(img: Path) -> tuple[int, dict[int, int]]:
    """This CPU's area size and standard-format offsets, from cpuinfo.img."""
    f = read_image(img / "cpuinfo.img")[1]
    size = next(fld[2] for fld in f if fld[0] == 8)
    offs = {}
    for fld in f:
        if fld[0] == 6:
            leaf = {x[0]: x[2] for x in crit.raw_fields(fld[2])}
            if leaf.get(1) == 0xD and leaf.get(2, 0) >= 2:
                offs[leaf[2]] = leaf.get(4, 0)
    return size, offs


def dumped(r: zdtm.Run) -> tuple[Path, int, list[list[Any]]]:
    if not host_xcr0() & (1 << AVX):
        pytest.skip("no AVX here: regs_avx has no component beyond the legacy region")
    r.start()
    img = r.imgdir("img")
    r.dump_ok(img)
    magic, f = fields_of(regs_img(img, r.pid))
    if not bv_of(f) & (1 << AVX) or AVX not in components(f):
        r.fail("the dump did not store the AVX component of regs_avx")
    return img, magic, f


def test_old_image_whole_area() -> None:
    """An older criu's image (the area whole, this CPU's size) loads."""
    with zdtm.Run("regs_avx", "xsave-old") as r:
        img, magic, f = dumped(r)
        size, offs = xsave_offsets(img)
        area = bytearray(size)
        area[:LEGACY] = next(fld[2] for fld in f if fld[0] == FXSAVE)
        struct.pack_into("<Q", area, LEGACY, bv_of(f))
        for feat, data in components(f).items():
            area[offs[feat]:offs[feat] + len(data)] = data
        old = [fld for fld in f if fld[0] not in (FXSAVE, XSTATE_BV, COMPONENTS)]
        old.append([XSTATE, 2, bytes(area)])
        write_image(regs_img(img, r.pid), magic, old)
        r.restore_ok(img)
        r.finish()


def test_old_image_other_size() -> None:
    """An older criu's area of another CPU's size: its layout is unknown,
    refused naming both sizes."""
    with zdtm.Run("regs_avx", "xsave-oldsize") as r:
        img, magic, f = dumped(r)
        size, _ = xsave_offsets(img)
        old = [fld for fld in f if fld[0] not in (FXSAVE, XSTATE_BV, COMPONENTS)]
        old.append([XSTATE, 2, bytes(size + 64)])
        write_image(regs_img(img, r.pid), magic, old)
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "an older image of another size",
                                 (f"{size + 64} bytes",), pid=r.pid)
        if str(size) not in line:
            r.fail(f"the Error line does not name this CPU's size: {line!r}", res)


def test_component_this_cpu_lacks() -> None:
    """A used component this CPU lacks (AVX-512 opmask state from another
    CPU): refused by name under fpu; dropped with a warning under
    --cpu-cap=none, the AVX registers intact."""
    with zdtm.Run("regs_avx", "xsave-lacks") as r:
        img, magic, f = dumped(r)
        if host_xcr0() & (1 << OPMASK) or "avx512f" in Path("/proc/cpuinfo").read_text():
            pytest.skip("this CPU has AVX-512")
        set_bv(f, bv_of(f) | 1 << OPMASK)
        f.append(component(OPMASK, bytes(range(64))))
        write_image(regs_img(img, r.pid), magic, f)
        res, _ = r.restore(img)
        check_clean_error(r, res, "a component this CPU lacks", ("avx512_opmask",), pid=r.pid)
        if zdtm.pid_exists(r.pid):
            r.fail("a process with the pid is left behind", res)
        r.restore_ok(img, ["--cpu-cap=none"])
        log = (img / "restore.log").read_text()
        if "lacks XSAVE components avx512_opmask" not in log:
            r.fail("no warning that avx512_opmask was dropped")
        r.finish()


@pytest.mark.parametrize("how", ["size", "missing", "stray"])
def test_invalid_components_refused(how: str) -> None:
    """A component of another size than this CPU's, a set XSTATE_BV bit
    without its component, a component whose bit is clear: one clean
    line each, nothing created, even with --cpu-cap=none."""
    with zdtm.Run("regs_avx", f"xsave-{how}") as r:
        img, magic, f = dumped(r)
        if how == "size":
            f = without(f, AVX) + [component(AVX, bytes(128))]
            words: tuple[str, ...] = ("avx has 256 bytes here, 128",)
        elif how == "missing":
            f = without(f, AVX)
            words = ("invalid xsave state",)
        else:
            set_bv(f, bv_of(f) & ~(1 << AVX))
            words = ("invalid xsave state",)
        write_image(regs_img(img, r.pid), magic, f)
        res, _ = r.restore(img, ["--cpu-cap=none"])
        check_clean_error(r, res, f"components forged ({how})", words, pid=r.pid)
        if zdtm.pid_exists(r.pid):
            r.fail("a process with the pid is left behind", res)
