"""Pages copied by several threads (--jobs, Documentation/design.md "Pages
with several jobs").

* static/mem_jobs (256 MiB, every page its own data, holes, a PROT_NONE
  area read through /proc/PID/mem) dumped and restored with --jobs 1, 2
  and 4: the program checks every word; the logs say how many threads
  copied and wrote; restore checks the store's checksums before it lets
  the task go;
* static/mem_thp's huge pages stay huge when restore's threads write them;
* the store and its pagemap are the same bytes whatever --jobs was (one
  task dumped twice, left running; its own areas compared);
* a pre-dump chain with --jobs 2 restores every page (mem_predump);
* --jobs 0, -1, 100000 and garbage are refused with one line, the task
  untouched.

Run: python3 -m pytest -q test/zdtm/test_jobs.py
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

import buildpaths
import zdtm
from test_predump import kernel_lacks, phase, round_, round_ok

pytestmark = pytest.mark.usefixtures("need_criu")

CRIT = buildpaths.CRIT
PROG = "mem_jobs"


def threads_used(img: zdtm.Path, pid: int, log: str = "dump.log") -> int:
    """How many threads copied @pid's pages (dump) or wrote them into the
    task (restore), as the log says; 1 when the one stream did."""
    verb = "copied" if log == "dump.log" else "written"
    m = re.search(rf"Task {pid}: \d+ bytes of memory {verb} by (\d+) thread",
                  (img / log).read_text(errors="replace"))
    return int(m.group(1)) if m else 1


def digest(path: zdtm.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def decode(r: zdtm.Run, path: zdtm.Path) -> dict:
    p = subprocess.run([sys.executable, str(CRIT), "decode", "-i", str(path)],
                       capture_output=True, text=True)
    if p.returncode:
        r.fail(f"crit decode {path.name}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def store_sums(r: zdtm.Run, img: zdtm.Path) -> list:
    inv = decode(r, img / "inventory.img")["entry"]
    return [s for s in inv.get("stores", []) if s["name"] == f"pages-{r.pid}.img"]


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_dump_restore_every_page(jobs: int) -> None:
    """Dump and restore with --jobs N: every page comes back; the dump
    copied with N threads (the store has 64 slices to share out), the
    restore wrote the pages with N threads (1: the task read them all)."""
    with zdtm.Run(PROG, f"jobs{jobs}") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--jobs", str(jobs)])
        used = threads_used(img, r.pid)
        if used != jobs:
            r.fail(f"--jobs {jobs}: the dump log says {used} thread(s) copied the pages")
        if not store_sums(r, img):
            r.fail(f"inventory.img has no checksums of pages-{r.pid}.img")
        p = subprocess.run([sys.executable, str(CRIT), "show", str(img)],
                           capture_output=True, text=True)
        if p.returncode:
            r.fail(f"crit show: {p.stderr.strip()}")
        r.restore_ok(img, ["--jobs", str(jobs)])
        used = threads_used(img, r.pid, "restore.log")
        if used != jobs:
            r.fail(f"--jobs {jobs}: the restore log says {used} thread(s) wrote the pages")
        r.finish()


def test_thp_stay_huge_with_jobs() -> None:
    """static/mem_thp (four huge pages, checked huge after restore by the
    program itself) dumped and restored with --jobs 4: the restore's
    threads write the area, and their faults still take huge pages."""
    with zdtm.Run("mem_thp", "jobs4") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--jobs", "4"])
        r.restore_ok(img, ["--jobs", "4"])
        if threads_used(img, r.pid, "restore.log") < 2:
            r.fail("the restore did not write the huge pages with several threads")
        r.finish()


def data_areas(pid: int) -> list[tuple[int, int]]:
    """mem_jobs's own areas: the 256 MiB one (maybe merged with a
    neighbour) and the PROT_NONE one."""
    out = []
    for line in zdtm.Path(f"/proc/{pid}/maps").read_text().splitlines():
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if len(f) == 5 and (hi - lo >= 256 << 20 or f[1] == "---p"):
            out.append((lo, hi))
    return out


def differing_runs(r: zdtm.Run, a: zdtm.Path, b: zdtm.Path) -> tuple[int, list[int]]:
    """How many runs of mem_jobs's own areas the dumps in @a and @b (the
    same pagemap) hold, and the addresses of those whose stored bytes
    differ. The rest moves between two dumps (the stack, errno)."""
    name = f"pages-{r.pid}.img"
    areas = data_areas(r.pid)
    off, seen, bad = 0, 0, []
    with open(a / name, "rb") as fa, open(b / name, "rb") as fb:
        for run in decode(r, a / f"pagemap-{r.pid}.img")["entry"].get("runs", []):
            if run.get("in_pid") or run.get("in_parent"):
                continue
            size = run["nr_pages"] * 4096
            if any(lo <= run["vaddr"] < hi for lo, hi in areas):
                seen += 1
                fa.seek(off)
                fb.seek(off)
                if fa.read(size) != fb.read(size):
                    bad.append(run["vaddr"])
            off += size
    return seen, bad


def test_same_images_whatever_jobs() -> None:
    """One task dumped with --jobs 1 and then --jobs 4 (left running in
    between): the same pagemap, and the same bytes at the same offsets in
    the store for the program's own areas."""
    with zdtm.Run(PROG, "same") as r:
        r.start()
        one, four = r.imgdir("one"), r.imgdir("four")
        r.dump_ok(one, ["--jobs", "1"], leave_running=True)
        r.dump_ok(four, ["--jobs", "4"], leave_running=True)
        if threads_used(four, r.pid) != 4:
            r.fail("--jobs 4 did not copy with 4 threads")
        name = f"pagemap-{r.pid}.img"
        if digest(one / name) != digest(four / name):
            r.fail(f"{name} differs between --jobs 1 and --jobs 4")
        if (one / f"pages-{r.pid}.img").stat().st_size != \
                (four / f"pages-{r.pid}.img").stat().st_size:
            r.fail("the page stores of --jobs 1 and --jobs 4 differ in size")
        seen, bad = differing_runs(r, one, four)
        if seen < 2:
            r.fail(f"mem_jobs's areas hold {seen} run(s) in the pagemap")
        if bad:
            r.fail(f"the stores differ in {len(bad)} run(s), the first at {bad[0]:#x}")
        if not store_sums(r, one) or not store_sums(r, four):
            r.fail(f"no checksums of pages-{r.pid}.img in inventory.img")
        r.finish()


def test_predump_chain_with_jobs() -> None:
    """pre-dump, pre-dump, dump, all --jobs 2, through mem_predump's
    phases: the restore gives every page (the program checks them)."""
    why = kernel_lacks()
    if why:
        pytest.skip(f"no dirty-page tracking on this kernel: {why}")
    with zdtm.Run("mem_predump", "jobs") as r:
        r.start()
        d = [r.imgdir(f"d{i}") for i in range(1, 4)]
        jobs = ["--jobs", "2"]
        round_ok(r, "pre-dump", d[0], None, jobs)
        phase(r, 1)
        round_ok(r, "pre-dump", d[1], "../d1", jobs)
        phase(r, 2)
        phase(r, 3)
        phase(r, 4)
        res = round_(r, "dump", d[2], "../d2", jobs)
        if res.returncode:
            r.fail("the final dump failed", res)
        r.gone_after_dump(res)
        if threads_used(d[0], r.pid) != 2:
            r.fail("the first pre-dump did not copy with 2 threads")
        (r.dir / "phases").write_text("4\n")
        r.restore_ok(d[2])
        r.finish()


@pytest.mark.parametrize("value", ["0", "-1", "100000", "two", ""])
def test_bad_jobs_refused(value: str) -> None:
    """A --jobs that is no number of threads: one error line naming the
    option and the value, and the task runs on untouched; --jobs 2 then
    dumps it."""
    with zdtm.Run(PROG, "badjobs") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        res = r.dump(img, [f"--jobs={value}"])
        errs = zdtm.error_lines(res.stderr)
        if res.returncode <= 0 or len(errs) != 1 or "--jobs" not in errs[0] or \
                f"'{value}'" not in errs[0]:
            r.fail(f"--jobs={value!r}: expected one error line naming --jobs and the value",
                   res)
        r.check_running("after a refused dump", snap)
        r.dump_ok(r.imgdir("good"), ["--jobs", "2"], leave_running=True)
        r.finish()
