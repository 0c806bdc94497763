"""What a dump and a restore do per thread and per task, counted, never
timed (issue 17; Documentation/design.md, "Per task and per thread"):

- a dump reads each thread's /proc status once (it was read by three
  parts, 75 us each in a task of 10,000 threads);
- a dump makes each image in a fresh images directory with one open
  (no look for, nor unlink of, what is not there; inventory.img is
  unlinked once first, on purpose);
- a restore collapses criu's heap, the loaded images of the whole tree
  that every task inherits with its fork, into huge pages first.

The dump runs under strace (skipped without it), which sees every openat,
newfstatat and unlinkat of criu and of its threads. Each program is
restored and checked as every zdtm test is."""
from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

import zdtm

pytestmark = pytest.mark.usefixtures("need_criu")

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def traced_dump(r: zdtm.Run, img: Path, trace: Path) -> str:
    """The dump, under strace: its trace."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed: criu's system calls can't be counted")
    r.criu_prefix = [strace, "-f", "-qq", "-o", str(trace),
                     "-e", "trace=openat,newfstatat,unlinkat"]
    try:
        res = r.dump(img)
    finally:
        r.criu_prefix = []
    if res.returncode != 0:
        r.fail("criu dump (under strace) failed", res)
    r.gone_after_dump(res)
    return trace.read_text(errors="replace")


def test_status_and_images_once() -> None:
    with zdtm.Run("shapes", "cost-threads", args=["threads=200"]) as r:
        r.start()
        snap = r.snapshot()
        tids = {int(p.name) for p in Path(f"/proc/{r.pid}/task").iterdir()}
        img = r.imgdir("img")
        trace = traced_dump(r, img, r.dir / "dump.strace")
        opened = Counter(int(m[1]) for m in re.finditer(
            r'openat\([^"]*"/proc/(?:\d+/task/)?(\d+)/status"', trace))
        more = {t: n for t, n in opened.items() if t in tids and n > 1}
        if len(tids) < 200:
            r.fail(f"the program has {len(tids)} threads, not 200")
        if more:
            r.fail(f"/proc status read more than once for {len(more)} of {len(tids)} "
                   f"threads, e.g. {sorted(more.items())[:5]}")
        missed = tids - set(opened)
        if missed:
            r.fail(f"no /proc status read for threads {sorted(missed)[:5]}: "
                   "the trace does not see them (strace)")
        # the one unlink of inventory.img first is the dump's own (no inventory,
        # no checkpoint), not a look before an image is made
        looked = [n for n in re.findall(r'(?:newfstatat|unlinkat)\(\d+, "([^"]+\.img)"', trace)
                  if n != "inventory.img"]
        if looked:
            r.fail(f"{len(looked)} looks or unlinks of images in a fresh images "
                   f"directory, e.g. {looked[:5]}")
        r.restore_ok(img)
        r.check_running("after restore", snap)
        r.finish()


def test_restore_heap_in_huge_pages() -> None:
    """3,000 threads: a regs image each, some 8 MiB of criu's heap at fork."""
    if not THP.exists() or "[never]" in THP.read_text():
        pytest.skip("transparent huge pages are off here (or absent): "
                    "criu's heap can't be collapsed")
    with zdtm.Run("shapes", "cost-heap", args=["threads=3000"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        log = (img / "restore.log").read_text(errors="replace")
        collapsed = re.search(r"criu's heap: (\d+) MiB in huge pages", log)
        refused = re.search(r"criu's heap stays in small pages: (.*)", log)
        if collapsed is None and refused is None:
            r.fail("criu's heap was not collapsed into huge pages before the fork "
                   "(no such line in restore.log)")
        r.check_running("after restore", snap)
        r.finish()
        if refused:
            pytest.skip(f"the kernel did not collapse criu's heap: {refused[1]}")
