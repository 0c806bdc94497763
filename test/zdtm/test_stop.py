"""Group stops seen from outside: the dumped task itself stopped (stop_root),
and dumps that leave a tree with stopped tasks behind (--leave-running,
--leave-stopped), which must find every stop exactly as it was: still
stopped, by the same signal, its report to the parent still pending or
still collected, no new SIGCHLD. The programs check what their parents see
themselves after SIGTERM; the runner checks the root's own stop, whose
parent it is.

Run: python3 -m pytest -q test/zdtm/test_stop.py
"""
from __future__ import annotations

import os
import signal
import time

import pytest

import zdtm
from test_tree import TreeRun


pytestmark = pytest.mark.usefixtures("need_criu")


def wait_stopped(r: TreeRun, what: str) -> None:
    """The root is in a group stop and no longer traced (criu has let go)."""
    deadline = time.monotonic() + 5
    while zdtm.proc_state(r.pid) != "T" or zdtm.tracer_pid(r.pid) != 0:
        if time.monotonic() > deadline:
            r.fail(f"{what}: the root is not stopped (state {zdtm.proc_state(r.pid)}, "
                   f"tracer {zdtm.tracer_pid(r.pid)})")
        time.sleep(0.01)


def check_report(r: TreeRun, what: str, pending: bool) -> None:
    """What waitpid(WUNTRACED | WNOHANG) tells us, the root's parent: its
    stop by SIGSTOP exactly once, or nothing."""
    pid, status = os.waitpid(r.pid, os.WUNTRACED | os.WNOHANG)
    if pending:
        if pid != r.pid or not os.WIFSTOPPED(status) or os.WSTOPSIG(status) != signal.SIGSTOP:
            r.fail(f"{what}: no report of the root's stop by SIGSTOP "
                   f"(waitpid: {pid}, status {status:#x})")
        pid, status = os.waitpid(r.pid, os.WUNTRACED | os.WNOHANG)
    if pid != 0:
        r.fail(f"{what}: {'a second' if pending else 'a'} report of the root "
               f"(status {status:#x})")


def start_stopped_root(r: TreeRun) -> None:
    r.start()
    wait_stopped(r, "before the dump")
    r.record()


def cont_and_finish(r: TreeRun, what: str, snap: zdtm.Snapshot) -> None:
    os.kill(r.pid, signal.SIGCONT)
    r.check_running(f"{what}, after SIGCONT", snap)
    r.finish()


def test_stopped_root_restore() -> None:
    """A stopped root comes back stopped; its new parent (criu exits, we
    are the subreaper) finds its stop to report, as we did before."""
    with TreeRun("stop_root", "plain") as r:
        start_stopped_root(r)
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        wait_stopped(r, "after restore")
        r.compare("after restore")
        check_report(r, "after restore", pending=True)
        cont_and_finish(r, "after restore", snap)


@pytest.mark.parametrize("waited", [False, True], ids=["unwaited", "waited"])
@pytest.mark.parametrize("opt", ["--leave-running", "--leave-stopped"])
def test_stopped_root_left(opt: str, waited: bool) -> None:
    """A dump that lets a stopped root go leaves it stopped, its report as
    it was: still pending, or collected by us before the dump."""
    with TreeRun("stop_root", opt.strip("-")) as r:
        start_stopped_root(r)
        snap = r.snapshot()
        if waited:
            check_report(r, "before the dump", pending=True)
        res = r.dump(r.imgdir("img"), [opt])
        if res.returncode != 0:
            r.fail(f"criu dump {opt} failed", res)
        wait_stopped(r, f"after dump {opt}")
        r.compare(f"after dump {opt}")
        check_report(r, f"after dump {opt}", pending=not waited)
        cont_and_finish(r, f"after dump {opt}", snap)


@pytest.mark.parametrize("name,opt", [
    ("tree_stopped", "--leave-running"),
    ("tree_stopped_unwaited", "--leave-running"),
    # every child is stopped: only the root's stop is new
    ("tree_stopped_unwaited", "--leave-stopped"),
])
def test_stopped_children_left(name: str, opt: str) -> None:
    """The stopped children of a tree a dump lets go: their parent checks
    after SIGTERM that it sees them as before."""
    with TreeRun(name, opt.strip("-")) as r:
        r.start()
        r.record()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), [opt])
        if res.returncode != 0:
            r.fail(f"criu dump {opt} failed", res)
        if opt == "--leave-stopped":
            wait_stopped(r, f"after dump {opt}")
            os.kill(r.pid, signal.SIGCONT)
        r.check_running(f"after dump {opt}", snap)
        r.compare(f"after dump {opt}")
        r.finish()
