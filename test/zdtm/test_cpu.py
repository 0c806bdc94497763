"""The CPU mapping (Documentation/cpu.md): criu cpuinfo dump/check, the
compatibility check restore makes before it creates anything (--cpu-cap),
and how a saved affinity is mapped to the CPUs online here (--cpu-map, the
automatic rule, CRIU_FAKE_ONLINE_CPUS). Run: python3 -m pytest -q test/zdtm -k cpu"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import buildpaths
import zdtm
from test_errors import check_clean_error

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")

XFEATURE_62 = 1 << 62          # no such XSAVE component
# CPUID 7.0 edx bit 14: an instruction set without XSAVE state (AMX's count
# only where the kernel enables its registers, XCR0)
SERIALIZE = ("7.0", 14)


# ------------------------------------------------ forged images
# Fields as crit.raw_fields() gives them: [number, wire type, value] in file
# order; varints are ints, length-delimited fields bytes.

def read_image(path: Path) -> tuple[int, list[list[Any]]]:
    data = path.read_bytes()
    magic, n, _ = struct.unpack("<III", data[:12])
    assert n == len(data) - 12, path
    return magic, crit.raw_fields(data[12:])


def write_image(path: Path, magic: int, fields: list[list[Any]]) -> None:
    """A frame of format 2: magic, length, CRC32C (images.md)."""
    body = crit.put_raw_fields(fields)
    path.write_bytes(struct.pack("<III", magic, len(body), crit.frame_sum(magic, body)) + body)


def forge_cpuinfo(path: Path, xfeatures_or: int = 0, leaf7_edx_or: int = 0,
                  vendor: str | None = None) -> None:
    """Adds XSAVE components / CPUID 7.0 edx bits the dumping CPU 'had'."""
    magic, f = read_image(path)
    for fld in f:
        if fld[0] == 7:                                 # xfeatures
            fld[2] |= xfeatures_or
        elif fld[0] == 10:                              # xfeatures_used
            fld[2] |= xfeatures_or
        elif fld[0] == 1 and vendor is not None:
            fld[2] = vendor.encode()
        elif fld[0] == 6:                               # cpuid_leaf
            leaf = crit.raw_fields(fld[2])
            vals = {x[0]: x for x in leaf}
            if vals[1][2] == 7 and vals[2][2] == 0:
                if 6 in vals:
                    vals[6][2] |= leaf7_edx_or
                else:
                    leaf.append([6, 0, leaf7_edx_or])
                fld[2] = crit.put_raw_fields(leaf)
    write_image(path, magic, f)


def forge_xstate_bv(path: Path, bv_or: int) -> None:
    """Makes every thread of cpu-PID.img use more XSAVE components."""
    magic, f = read_image(path)
    for fld in f:
        if fld[0] == 1:                                 # cpu_thread
            th = crit.raw_fields(fld[2])
            for x in th:
                if x[0] == 4:                           # xstate_bv
                    x[2] |= bv_or
            fld[2] = crit.put_raw_fields(th)
    write_image(path, magic, f)


def host_has_serialize() -> bool:
    flags = Path("/proc/cpuinfo").read_text()
    return re.search(r"^flags\s*:.*\bserialize\b", flags, re.M) is not None


def allowed_list(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


def fake_online(cpus: str) -> dict[str, str]:
    return dict(os.environ, CRIU_FAKE_ONLINE_CPUS=cpus)


def cpu_set(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def need_cpu1() -> None:
    if 1 not in cpu_set(allowed_list(os.getpid())):
        pytest.skip("CPU 1 is not available to us")


# ------------------------------------------------------ criu cpuinfo

def cpuinfo(r: zdtm.Run, sub: str, img: Path, *opts: str) -> zdtm.CriuResult:
    return r.criu(["cpuinfo", sub, "-D", str(img)] + list(opts))


def test_cpuinfo_dump_check():
    """cpuinfo dump writes cpuinfo.img (0600); check on the same CPU passes,
    with every --cpu-cap."""
    with zdtm.Run("cpu_affinity", "cpuinfo") as r:
        img = r.imgdir("img")
        res = cpuinfo(r, "dump", img)
        if res.returncode != 0 or res.stderr.strip():
            r.fail("cpuinfo dump", res)
        files = sorted(p.name for p in img.iterdir())
        if files != ["cpuinfo.img"]:
            r.fail(f"cpuinfo dump wrote {files}, not just cpuinfo.img", res)
        mode = (img / "cpuinfo.img").stat().st_mode & 0o777
        if mode != 0o600:
            r.fail(f"cpuinfo.img has mode {mode:o}", res)
        caps: list[list[str]] = [[], ["--cpu-cap=all"], ["--cpu-cap=cpu"],
                                 ["--cpu-cap", "fpu,ins"]]
        for cap in caps:
            res = cpuinfo(r, "check", img, *cap)
            if res.returncode != 0 or zdtm.error_lines(res.stderr):
                r.fail(f"cpuinfo check {cap} on the same CPU", res)


def test_cpuinfo_check_unknown_xfeature():
    """An image of a CPU with an XSAVE component this one lacks: check
    fails with one line naming it; --cpu-cap=none or ins let it pass."""
    with zdtm.Run("cpu_affinity", "cpuinfo-xfeature") as r:
        img = r.imgdir("img")
        if cpuinfo(r, "dump", img).returncode != 0:
            r.fail("cpuinfo dump")
        forge_cpuinfo(img / "cpuinfo.img", xfeatures_or=XFEATURE_62)
        res = cpuinfo(r, "check", img)
        line = check_clean_error(r, res, "cpuinfo check of a foreign image")
        if "xfeature 62" not in line or "XSAVE" not in line:
            r.fail(f"the error line does not name the missing component: {line!r}", res)
        for cap in ("--cpu-cap=none", "--cpu-cap=ins", "--cpu-cap=^fpu"):
            res = cpuinfo(r, "check", img, cap)
            if res.returncode != 0:
                r.fail(f"cpuinfo check {cap} must not look at XSAVE components", res)
        res = cpuinfo(r, "check", img, "--cpu-cap=cpu")
        line = check_clean_error(r, res, "cpuinfo check --cpu-cap=cpu")
        if "XCR0" not in line:
            r.fail(f"--cpu-cap=cpu does not report the XCR0 difference: {line!r}", res)


def test_cpuinfo_check_missing_instructions():
    """An image of a CPU with SERIALIZE: check fails naming it here."""
    if host_has_serialize():
        pytest.skip("this CPU has SERIALIZE")
    with zdtm.Run("cpu_affinity", "cpuinfo-ins") as r:
        img = r.imgdir("img")
        if cpuinfo(r, "dump", img).returncode != 0:
            r.fail("cpuinfo dump")
        forge_cpuinfo(img / "cpuinfo.img", leaf7_edx_or=1 << SERIALIZE[1])
        res = cpuinfo(r, "check", img)
        line = check_clean_error(r, res, "cpuinfo check of a SERIALIZE image")
        if "serialize" not in line:
            r.fail(f"the error line does not name serialize: {line!r}", res)
        res = cpuinfo(r, "check", img, "--cpu-cap=fpu")
        if res.returncode != 0:
            r.fail("cpuinfo check --cpu-cap=fpu must not look at instructions", res)


def test_cpuinfo_check_vendor():
    """--cpu-cap=cpu wants the same vendor; the default doesn't."""
    with zdtm.Run("cpu_affinity", "cpuinfo-vendor") as r:
        img = r.imgdir("img")
        if cpuinfo(r, "dump", img).returncode != 0:
            r.fail("cpuinfo dump")
        forge_cpuinfo(img / "cpuinfo.img", vendor="CentaurHauls")
        if cpuinfo(r, "check", img).returncode != 0:
            r.fail("the default check must not compare vendors")
        res = cpuinfo(r, "check", img, "--cpu-cap=cpu")
        line = check_clean_error(r, res, "cpuinfo check --cpu-cap=cpu, other vendor")
        if "CentaurHauls" not in line:
            r.fail(f"the error line does not name the vendor: {line!r}", res)


def test_cpuinfo_usage():
    with zdtm.Run("cpu_affinity", "cpuinfo-usage") as r:
        img = r.imgdir("img")
        for args in (["cpuinfo", "-D", str(img)], ["cpuinfo", "frob", "-D", str(img)],
                     ["cpuinfo", "check", "-D", str(img), "--cpu-cap=bogus"],
                     ["cpuinfo", "check", "-D", str(img)]):
            res = r.criu(args)
            check_clean_error(r, res, " ".join(args))


# ------------------------------------------------ restore's CPU check

def test_restore_refuses_unknown_xstate():
    """The saved registers use an XSAVE component this CPU lacks: restore
    refuses before creating anything, in one line naming it and the task;
    the task is untouched. --cpu-cap=none restores it."""
    with zdtm.Run("cpu_affinity_keep", "xstate", args=["0", "0"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        cpu_img = img / f"cpu-{r.pid}.img"
        forge_xstate_bv(cpu_img, XFEATURE_62)
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore with a foreign XSAVE component",
                                 ("xfeature 62",), pid=r.pid)
        if "--cpu-cap" not in line:
            r.fail(f"the error line does not say how to override: {line!r}", res)
        log = (img / "restore.log").read_text()
        if "Forking" in log:
            r.fail("restore forked before it refused", res)
        r.check_running("after the refused restore", snap)
        r.kill()
        r.restore_ok(img, ["--cpu-cap=none"])
        r.check_running("after restore with --cpu-cap=none", snap)
        r.finish()


def test_restore_refuses_missing_instructions():
    if host_has_serialize():
        pytest.skip("this CPU has SERIALIZE")
    with zdtm.Run("cpu_affinity_keep", "ins", args=["0", "0"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        forge_cpuinfo(img / "cpuinfo.img", leaf7_edx_or=1 << SERIALIZE[1])
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore of a task from a SERIALIZE CPU", ("serialize",),
                          pid=r.pid)
        if zdtm.pid_exists(r.pid):
            r.fail("a process with the pid is left behind", res)
        r.restore_ok(img, ["--cpu-cap=fpu"])
        r.finish()


def test_restore_without_cpuinfo():
    """No cpuinfo.img: the default check can't be made and says so;
    --cpu-cap=none restores without it."""
    with zdtm.Run("cpu_affinity_keep", "no-cpuinfo", args=["0", "0"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        (img / "cpuinfo.img").unlink()
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore without cpuinfo.img", ("cpuinfo.img",),
                          pid=r.pid)
        r.restore_ok(img, ["--cpu-cap=none"])
        r.finish()


# ------------------------------------------------ affinity mapping

def test_remap_auto_warns():
    """Pinned to CPU 1, restored where only CPU 0 is online, no --cpu-map:
    one warning line on stderr says what was remapped; the log has it at
    info level too; the task runs on CPU 0 (and checks that itself)."""
    need_cpu1()
    with zdtm.Run("cpu_affinity", "auto", args=["1", "0"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        pidfile = img / "restore.pid"
        res = r.criu(["restore", "-D", str(img), "-d", "--pidfile", str(pidfile)],
                     env=fake_online("0"))
        if res.returncode != 0:
            r.fail("restore with CPU 1 missing", res)
        r.alive = r.ours = True
        warns = [l for l in res.stderr.splitlines() if "Warn" in l]
        if len(warns) != 1 or "CPUs 1 " not in warns[0] or "runs on CPUs 0" not in warns[0]:
            r.fail(f"expected one warning line about CPU 1 -> 0, got {warns}", res)
        if zdtm.error_lines(res.stderr):
            r.fail("a successful restore printed an Error line", res)
        if allowed_list(r.pid) != "0":
            r.fail(f"restored task may run on {allowed_list(r.pid)}, not 0", res)
        r.kill()
        res, _ = r.restore(img, env=fake_online("0"))
        if res.returncode != 0:
            r.fail("restore with CPU 1 missing, with a log", res)
        log = (img / "restore.log").read_text()
        if "CPU 1 is not online: CPU 0 here" not in log:
            r.fail("the log has no info line for the remapped CPU", res)
        r.alive = r.ours = True
        r.finish()


def test_remap_to_nothing():
    """With --cpu-map that does not cover the missing CPU, the affinity maps
    to nothing: an error naming the task and the CPUs, nothing created."""
    need_cpu1()
    with zdtm.Run("cpu_affinity", "nothing", args=["1", "0"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        res, _ = r.restore(img, ["--cpu-map", "2:0"], env=fake_online("0"))
        line = check_clean_error(r, res, "restore with an affinity that maps to nothing",
                                 ("cpu",), pid=r.pid)
        if "affinity 1" not in line or "online: 0" not in line:
            r.fail(f"the error line does not name the CPUs: {line!r}", res)
        if zdtm.pid_exists(r.pid):
            r.fail("a process with the pid is left behind", res)
        for bad, word in ((["--cpu-map", "1:5"], "not online"),
                          (["--cpu-map", "1-0"], "src:dst"),
                          (["--cpu-map", "1:0,1:0"], "twice")):
            res, _ = r.restore(img, bad, env=fake_online("0"))
            check_clean_error(r, res, f"restore {bad}", (word,))
        r.restore_ok(img, ["--cpu-map", "1:0"], env=fake_online("0"))
        r.finish()


def test_unpinned_gets_every_cpu():
    """A task that may run everywhere may run everywhere after restore, even
    if criu itself was restricted to one CPU."""
    need_cpu1()
    with zdtm.Run("cpu_affinity_keep", "unpinned", args=["none", "0"]) as r:
        r.start()
        before = allowed_list(r.pid)
        img = r.imgdir("img")
        r.dump_ok(img)
        pidfile = img / "restore.pid"
        cmd = ["taskset", "-c", "0", zdtm.CRIU, "restore", "-D", str(img), "-d",
               "-o", "restore.log", "--pidfile", str(pidfile)]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=zdtm.CRIU_TIMEOUT)
        res = zdtm.CriuResult(cmd, p.returncode, p.stdout, p.stderr, img / "restore.log")
        if p.returncode != 0:
            r.fail("restore under taskset -c 0", res)
        r.alive = r.ours = True
        if allowed_list(r.pid) != before:
            r.fail(f"restored task may run on {allowed_list(r.pid)}, before on {before}",
                   res)
        r.finish()
