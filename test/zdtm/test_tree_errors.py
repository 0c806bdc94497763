"""Trees and threads criu must refuse to dump, and how: a task of the tree
traced by someone else (a child deep in the tree, a thread that is not the
leader), and a tree with a task in a user namespace of its own.

The refusal must be clean (non-zero exit, not by a signal, exactly one
stderr line mentioning "Error", naming the task at fault), and the whole
tree must come out as it went in: every task running, none stopped or
traced by criu, the same pids, ids, threads, names and maps (test_tree.py's
walk), and the program passes its own check afterwards.

Run: python3 -m pytest -q test/zdtm/test_tree_errors.py
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from typing import Optional

import pytest

import zdtm
from test_errors import check_clean_error
from test_tree import TreeRun, read_stat

pytestmark = pytest.mark.usefixtures("need_criu")

# A tracer of its own: PTRACE_SEIZE (no stop), say so, hold on until killed.
TRACER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
tid = int(sys.argv[1])
if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
    print("error", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print("ok", flush=True)
while True:
    time.sleep(60)
"""


def check_tree_released(r: TreeRun, what: str, allowed_tracer: int = 0) -> None:
    """Every task of the tree runs, none stopped, none traced but by
    allowed_tracer."""
    deadline = time.monotonic() + 3
    while True:
        bad = []
        for pid, t in r.tree().items():
            for tid, _ in t.threads:
                st = read_stat(tid)
                tracer = zdtm.tracer_pid(tid)
                if st is None:
                    continue
                if (st[0] in "tT" and not t.zombie) or tracer not in (0, allowed_tracer):
                    bad.append(f"task {pid} thread {tid}: state {st[0]}, tracer {tracer}")
        if not bad or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if bad:
        r.fail(f"{what}: the tree is not released:\n  " + "\n  ".join(bad))


def start_tracer(r: TreeRun, tid: int) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", TRACER, str(tid)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline().strip() if p.stdout else ""
    if line != "ok":
        p.kill()
        p.wait()
        r.fail(f"cannot trace {tid}: {line}")
    r.note(f"{tid} traced by {p.pid}")
    return p


def stop_tracer(r: TreeRun, p: subprocess.Popen[str]) -> None:
    p.kill()
    p.wait()
    r.note("tracer gone")


def culprits_of(r: TreeRun, comm: Optional[str], thread: bool) -> list[int]:
    """The tasks at fault: with thread, (pid, tid) of the thread named comm;
    else the tasks whose main thread is named comm, or with comm None every
    task but the root."""
    views = r.tree()
    if thread:
        for pid, t in views.items():
            for tid, c in t.threads:
                if c == comm:
                    return [pid, tid]
        r.fail(f"no thread named {comm} in the tree")
    culprits = [pid for pid, t in views.items()
                if (t.threads[0][1] == comm if comm else pid != r.pid)]
    if not culprits:
        r.fail(f"no task named {comm} in the tree")
    return culprits


# program, comm of the task at fault (None: every task but the root),
# whether that thread is traced by another process (the tree itself is
# fine then), what is refused, words one of which the error line must say
# (none: any reason will do)
REFUSED_TREES = [
    # a task two levels down, in another session
    ("tree_session", "ts-b1", True, "tree_session with ts-b1 traced", ()),
    # a thread that is not the leader
    ("thread_state", "w-spin", True, "thread_state with w-spin traced", ()),
    ("refuse_userns", "ru-child", False, "a child in its own user namespace", ("user",)),
    ("thread_leader_exit", None, False, "a process whose main thread exited",
     ("main thread",)),
    # an orphan in a session whose leader lives but is no sibling of it:
    # nothing could fork it at restore
    ("tree_session_cousin", "tsc-cousin", False,
     "an orphan its session's leader can't fork", ("session",)),
]


@pytest.mark.parametrize("prog,comm,traced,what,words", REFUSED_TREES,
                         ids=[f"{t[0]}-traced" if t[2] else t[0] for t in REFUSED_TREES])
def test_dump_refused_tree(prog: str, comm: Optional[str], traced: bool, what: str,
                           words: tuple[str, ...]) -> None:
    """Refused, naming the task at fault, and the tree goes on untouched;
    when the refusal is that a thread is traced by another process,
    whatever criu had seized already goes free."""
    with TreeRun(prog, f"traced-{comm}" if traced else "refused") as r:
        r.start()
        r.record()
        snap = r.snapshot()
        culprits = culprits_of(r, comm, traced)
        tracer = start_tracer(r, culprits[-1]) if traced else None
        try:
            img = r.imgdir("img")
            res = r.dump(img)
            check_clean_error(r, res, f"dump of {what}", words, culprits)
            check_tree_released(r, "after the refused dump",
                                allowed_tracer=tracer.pid if tracer else 0)
        finally:
            if tracer:
                stop_tracer(r, tracer)
        r.check_running("after the refused dump", snap)
        r.compare("after the refused dump")
        r.finish()


# Takes pid argv[1] (clone3 with set_tid) for a sleep; says "ok PID" and
# waits for it.
SQUATTER = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
class Args(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack",
        "stack_size", "tls", "set_tid", "set_tid_size", "cgroup")]
want = (ctypes.c_int32 * 1)(int(sys.argv[1]))
a = Args(exit_signal=signal.SIGCHLD, set_tid=ctypes.addressof(want), set_tid_size=1)
pid = libc.syscall(435, ctypes.byref(a), ctypes.sizeof(a))
if pid == 0:
    os.execv("/bin/sleep", ["sleep", "600"])
if pid < 0:
    print("error", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print("ok", pid, flush=True)
os.waitpid(pid, 0)
"""


def test_restore_gone_leader_pid_taken() -> None:
    """The pid of a session's gone leader, free after the dump, taken by
    another process: the restore fails with one line naming it, leaves no
    task behind and the images as they were; once it is free again, the
    restore works."""
    with TreeRun("tree_orphan_session", "leader-pid-taken") as r:
        r.start()
        r.record()
        snap = r.snapshot()
        views = r.tree()
        gone = sorted({t.sid for t in views.values()} - set(views))
        if not gone:
            r.fail(f"no session with a gone leader in the tree: {views}")
        img = r.imgdir("img")
        r.dump_ok(img)
        before = {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")}
        sq = subprocess.Popen([sys.executable, "-c", SQUATTER, str(gone[0])],
                              stdout=subprocess.PIPE, text=True)
        said = (sq.stdout.readline() if sq.stdout else "").split()
        try:
            if said[:1] != ["ok"]:
                r.fail(f"could not take pid {gone[0]}: {said}")
            res, _ = r.restore(img)
            line = check_clean_error(r, res, "restore with a gone leader's pid taken",
                                     ("session", "group"), [gone[0]])
            left = [pid for pid in views if zdtm.pid_exists(pid)]
            if left:
                r.fail(f"tasks left behind by the failed restore: {left} ({line})")
            after = {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")}
            if after != before:
                r.fail("the failed restore changed the images")
        finally:
            if said[:1] == ["ok"]:
                os.kill(int(said[1]), signal.SIGKILL)
            sq.wait()
        r.restore_ok(img)
        r.check_running("after the restore once the pid is free", snap)
        r.compare("after the restore once the pid is free")
        r.finish()
