"""Memory several tasks share, seen from outside (the static/ programs
check their own contents and maps):

* private pages a child still shares with its parent (copy on write, never
  written since the fork) are stored once: the child's pagemap points into
  the store that holds the parent's copy (mem_cow_tree), and a dump that
  leaves the tree running does not make them private copies;
* a System V segment attached in criu's own IPC namespace is refused with a
  clear error, and the task runs on untouched (sysvipc_host).

Run: python3 -m pytest -q test/zdtm/test_mem_tree.py
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import buildpaths
import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

CRIT = buildpaths.CRIT


def tree_pids(root: int) -> list[int]:
    """root and its descendants, parents first."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        for tid in sorted((zdtm.Path(f"/proc/{pid}/task")).iterdir()):
            kids = (tid / "children").read_text().split()
            todo += [int(k) for k in kids]
    return out


def pagemap(r: zdtm.Run, img: zdtm.Path, pid: int) -> dict:
    p = subprocess.run([sys.executable, str(CRIT), "decode", "-i",
                        str(img / f"pagemap-{pid}.img")],
                       capture_output=True, text=True)
    if p.returncode:
        r.fail(f"crit decode pagemap-{pid}.img: {p.stderr.strip()}")
    return json.loads(p.stdout)["entry"]


@pytest.mark.parametrize("flavour", ["plain", "leave-running"])
def test_cow_pages_stored_once(flavour):
    """The children of mem_cow_tree store what they rewrote (and what their
    parent rewrote after the fork), not the pages they still share."""
    with zdtm.Run("mem_cow_tree", f"stored-once-{flavour}") as r:
        r.start()
        snap = r.snapshot()
        pids = tree_pids(r.pid)
        if len(pids) != 4:
            r.fail(f"expected 4 tasks, found {pids}")
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=(flavour == "leave-running"))
        if flavour == "leave-running":
            r.check_running("after dump --leave-running", snap)
            r.kill()
        sizes = {pid: (img / f"pages-{pid}.img").stat().st_size for pid in pids}
        root = sizes[pids[0]]
        for pid in pids[1:]:
            pm = pagemap(r, img, pid)
            refs = [run for run in pm.get("runs", []) if run.get("in_pid")]
            shared = sum(run["nr_pages"] for run in refs) * 4096
            # kid1 rewrote a third of the 8 MiB and the root an eleventh;
            # the others less: each shares well over half with its parent
            if not refs or shared < 4 << 20:
                r.fail(f"task {pid} refers to only {shared} bytes of its parent's "
                       f"pages ({len(refs)} runs)")
            if sizes[pid] > root // 2:
                r.fail(f"task {pid} stored {sizes[pid]} bytes, the root {root}")
            owners = {run["in_pid"] for run in refs}
            if not owners <= set(pids) or pid in owners:
                r.fail(f"task {pid} refers to the stores of {owners}")
        r.restore_ok(img)
        r.check_running("after restore", snap)
        r.finish()


def tree_pss_kib(root: int) -> int:
    total = 0
    for pid in tree_pids(root):
        for line in zdtm.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


def test_cow_pages_stay_shared_when_left_running():
    """Reading a page a parent shares copy-on-write must not give the parent
    a copy of its own: a tree left running would need the memory twice."""
    with zdtm.Run("mem_cow_tree", "left-shared") as r:
        r.start()
        snap = r.snapshot()
        before = tree_pss_kib(r.pid)
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        r.check_running("after dump --leave-running", snap)
        after = tree_pss_kib(r.pid)
        # the root shares about 6 MiB with its children
        if after > before + 1024:
            r.fail(f"the tree's memory grew from {before} KiB to {after} KiB "
                   "(proportional set size) during the dump")
        r.finish()


def test_sysvipc_host_refused():
    """A segment in criu's IPC namespace: refused, the task untouched."""
    with zdtm.Run("sysvipc_host", "refused") as r:
        check_refused_dump(r, "a System V segment of the host's IPC namespace",
                           ("ipc namespace",))
