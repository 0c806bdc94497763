"""The instruction check of restore (--cpu-cap's "ins", Documentation/cpu.md,
"Moving to another CPU model"): what is missing is listed with the reason
and the way out; a task whose glibc was started without those features
(GLIBC_TUNABLES=glibc.cpu.hwcaps=-...) restores, unless its libraries'
x86-64 level or code generated at run time needs them. The dumping CPU's
features are forged into cpuinfo.img: this CPU plays the destination.
Run: python3 -m pytest -q test/zdtm -k cpu_ins"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import buildpaths
import zdtm
from test_cpu import read_image, write_image
from test_errors import check_clean_error

import crit

pytestmark = pytest.mark.usefixtures("need_criu")

# CPUID 7.0 ebx bits (the kernel's cpufeatures.h)
AVX512F, AVX512BW = 16, 30
# CPUID 7.0 edx bit 24: amx_tile, which no glibc tunable hides
AMX_TILE = 24
# the XSAVE components their registers live in (XCR0 bits)
XCR0_AVX512 = 0xE0             # avx512_opmask, avx512_zmm_hi256, avx512_hi16_zmm
XCR0_AMX = 0x60000             # amx_tilecfg, amx_tiledata
LIBDL = Path("/lib/x86_64-linux-gnu/libdl.so.2")

# the x86-64 psABI levels by /proc/cpuinfo's names (each adds to the one below)
LEVELS = [
    {"lm", "cmov", "cx8", "fpu", "fxsr", "mmx", "sse", "sse2"},
    {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"},
    {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
    {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
]


def host_flags() -> set[str]:
    m = re.search(r"^flags\s*:(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    return set(m.group(1).split()) if m else set()


def host_level() -> int:
    flags, level = host_flags(), 0
    for need in LEVELS:
        if not need <= flags:
            break
        level += 1
    return level


def need_no_avx512() -> None:
    if {"avx512f", "avx512bw"} & host_flags():
        pytest.skip("this CPU has AVX-512: it can't play a destination without it")


def forge_leaf7(path: Path, ebx_or: int = 0, edx_or: int = 0, xcr0_or: int = 0) -> None:
    """The dumping CPU 'had' these CPUID 7.0 ebx/edx bits too, and its
    kernel enabled these XSAVE components (XCR0; not the ones used)."""
    magic, f = read_image(path)
    for fld in f:
        if fld[0] == 7:                                 # xfeatures
            fld[2] |= xcr0_or
        if fld[0] != 6:                                 # cpuid_leaf
            continue
        leaf = crit.raw_fields(fld[2])
        vals = {x[0]: x for x in leaf}
        if vals[1][2] != 7 or vals[2][2] != 0:
            continue
        for num, bits in ((4, ebx_or), (6, edx_or)):
            if num in vals:
                vals[num][2] |= bits
            else:
                leaf.append([num, 0, bits])
        fld[2] = crit.put_raw_fields(sorted(leaf, key=lambda x: int(x[0])))
    write_image(path, magic, f)


def field(path: Path, num: int) -> object:
    for fld in read_image(path)[1]:
        if fld[0] == num:
            return fld[2]
    return None


def crit_show(img: Path) -> str:
    res = subprocess.run([sys.executable, str(buildpaths.CRIT), "show", str(img)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def dump_forged(r: zdtm.Run, ebx_or: int = 0, edx_or: int = 0,
                xcr0_or: int = XCR0_AVX512 | XCR0_AMX) -> Path:
    r.start()
    img = r.imgdir("img")
    r.dump_ok(img)
    forge_leaf7(img / "cpuinfo.img", ebx_or, edx_or, xcr0_or)
    return img


def test_level_recorded() -> None:
    """cpuinfo.img records the x86-64 level of the dumping CPU, as its
    /proc/cpuinfo flags make it."""
    with zdtm.Run("cpu_affinity_keep", "level", args=["0", "0"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        level = field(img / "cpuinfo.img", 12)
        if level != host_level():
            r.fail(f"x86_64_level {level}, /proc/cpuinfo says v{host_level()}")
        if host_level() and f"x86-64-v{host_level()}" not in crit_show(img):
            r.fail("crit show does not print the level")
        r.restore_ok(img)
        r.finish()


def test_missing_listed_with_advice() -> None:
    """Missing instruction sets are all named, with why they matter, the
    mask that would have made the task movable (glibc's names), and the
    ones no mask hides."""
    need_no_avx512()
    if "amx_tile" in host_flags():
        pytest.skip("this CPU has AMX")
    with zdtm.Run("cpu_affinity_keep", "ins-advice", args=["0", "0"]) as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW, 1 << AMX_TILE)
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore from an AVX-512 CPU", ("avx512f",),
                                 pid=r.pid)
        for want in ("avx512bw", "amx_tile", "chosen code paths",
                     "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512BW",
                     "no glibc tunable hides amx_tile", f"this CPU x86-64-v{host_level()}"):
            if want not in line:
                r.fail(f"the Error line lacks {want!r}: {line!r}", res)
        if zdtm.pid_exists(r.pid):
            r.fail("a process with the pid is left behind", res)
        r.restore_ok(img, ["--cpu-cap=fpu"])
        r.finish()


def test_masked_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task started with glibc.cpu.hwcaps=-AVX512F,-AVX512BW restores
    where those are missing; the mask is recorded in cpu-PID.img."""
    need_no_avx512()
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F,-AVX512BW")
    with zdtm.Run("cpu_affinity_keep", "ins-masked", args=["0", "0"]) as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW)
        mask = field(img / f"cpu-{r.pid}.img", 5)
        if mask != b"-AVX512F,-AVX512BW":
            r.fail(f"cpu_mask recorded as {mask!r}")
        if "chose its code by: glibc.cpu.hwcaps=-AVX512F,-AVX512BW" not in crit_show(img):
            r.fail("crit show does not print the mask")
        r.restore_ok(img)
        log = (img / "restore.log").read_text()
        if "lacks avx512f,avx512bw, which its glibc was started without" not in log:
            r.fail("the restore log does not say what the mask excused")
        r.finish()


@pytest.mark.parametrize("tunables", [
    "glibc.cpu.hwcaps=-avx512f,-avx512bw",             # glibc's names are case-sensitive
    "glibc.cpu.hwcaps=-AVX512F",                        # AVX512BW not masked
    "glibc.cpu.hwcaps=-AVX512F,-AVX512BW:glibc.cpu.hwcaps=-AVX2",  # the last one counts
])
def test_mask_glibc_ignored_refused(monkeypatch: pytest.MonkeyPatch,
                                    tunables: str) -> None:
    """A mask glibc did not apply to what is missing excuses nothing."""
    need_no_avx512()
    monkeypatch.setenv("GLIBC_TUNABLES", tunables)
    with zdtm.Run("cpu_affinity_keep", "ins-badmask", args=["0", "0"]) as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW)
        res, _ = r.restore(img)
        check_clean_error(r, res, f"restore with {tunables}", ("avx512bw",), pid=r.pid)
        r.restore_ok(img, ["--cpu-cap=fpu"])
        r.finish()


def test_hwcaps_level_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Libraries from glibc-hwcaps/x86-64-v4 need AVX-512 whatever the mask
    says: refused, naming them."""
    need_no_avx512()
    if not LIBDL.exists():
        pytest.skip(f"no {LIBDL} to load from a glibc-hwcaps directory")
    lib = tmp_path / "glibc-hwcaps" / "x86-64-v4" / LIBDL.name
    lib.parent.mkdir(parents=True)
    shutil.copy(LIBDL, lib)
    monkeypatch.setenv("LD_PRELOAD", str(lib))
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F,-AVX512BW")
    with zdtm.Run("cpu_affinity_keep", "ins-hwcaps", args=["0", "0"]) as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW)
        monkeypatch.delenv("LD_PRELOAD")
        if field(img / f"cpu-{r.pid}.img", 3) != 4:
            r.fail("hwcaps_level 4 is not recorded")
        if f"libraries of x86-64-v4 ({lib})" not in crit_show(img):
            r.fail("crit show does not print the libraries' level")
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore of x86-64-v4 libraries", ("avx512f",),
                                 pid=r.pid)
        if "glibc-hwcaps/x86-64-v4" not in line:
            r.fail(f"the Error line does not name the libraries: {line!r}", res)
        r.restore_ok(img, ["--cpu-cap=fpu"])
        r.finish()


def test_jit_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code generated at run time read CPUID itself: the mask excuses
    nothing, and the Error line says why."""
    need_no_avx512()
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F,-AVX512BW")
    with zdtm.Run("cpu_jit", "ins-jit") as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW)
        if "code generated at run time (anonymous writable executable memory" \
                not in crit_show(img):
            r.fail("crit show does not print the JIT code")
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore of a JIT", ("avx512f",), pid=r.pid)
        if "code generated at run time" not in line:
            r.fail(f"the Error line does not name the JIT: {line!r}", res)
        r.restore_ok(img, ["--cpu-cap=fpu"])
        r.finish()


def test_registers_not_enabled_not_needed() -> None:
    """AVX-512 and AMX in CPUID, but the dumping kernel did not enable their
    registers (XCR0): their instructions faulted there, so the task can't
    have used them and nothing is refused."""
    need_no_avx512()
    if "amx_tile" in host_flags():
        pytest.skip("this CPU has AMX")
    with zdtm.Run("cpu_affinity_keep", "ins-xcr0", args=["0", "0"]) as r:
        img = dump_forged(r, 1 << AVX512F | 1 << AVX512BW, 1 << AMX_TILE, xcr0_or=0)
        r.restore_ok(img)
        r.finish()
