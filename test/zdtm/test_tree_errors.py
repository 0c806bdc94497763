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

import pytest

import zdtm
from test_tree import TreeRun, read_stat

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

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


@pytest.fixture(autouse=True)
def _need_criu():
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


def check_refused(r: TreeRun, res: zdtm.CriuResult, what: str, culprits: list[int],
                  words: tuple[str, ...]) -> str:
    """criu refused cleanly and named the task at fault; returns the line."""
    if res.returncode == 0:
        r.fail(f"{what}: criu succeeded but must refuse", res)
    if res.returncode < 0:
        r.fail(f"{what}: criu died of signal {-res.returncode}", res)
    errs = zdtm.error_lines(res.stderr)
    if len(errs) != 1:
        r.fail(f"{what}: expected exactly one 'Error' line on stderr, got {len(errs)}", res)
    line = errs[0]
    if not any(str(p) in line for p in culprits):
        r.fail(f"{what}: the Error line names none of {culprits}: {line!r}", res)
    if words and not any(w in line.lower() for w in words):
        r.fail(f"{what}: the Error line says none of {words}: {line!r}", res)
    return line


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


def start_tracer(r: TreeRun, tid: int) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", TRACER, str(tid)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline().strip()
    if line != "ok":
        p.kill()
        p.wait()
        r.fail(f"cannot trace {tid}: {line}")
    r.note(f"{tid} traced by {p.pid}")
    return p


def stop_tracer(r: TreeRun, p: subprocess.Popen) -> None:
    p.kill()
    p.wait()
    r.note("tracer gone")


def by_comm(r: TreeRun, comm: str) -> tuple[int, int]:
    """(pid, tid) of the thread named comm in the tree."""
    for pid, t in r.tree().items():
        for tid, c in t.threads:
            if c == comm:
                return pid, tid
    r.fail(f"no thread named {comm} in the tree")
    raise AssertionError


@pytest.mark.parametrize("prog,comm", [
    ("tree_session", "ts-b1"),      # a task two levels down, in another session
    ("thread_state", "w-spin"),     # a thread that is not the leader
])
def test_dump_traced(prog: str, comm: str) -> None:
    """A task or thread of the tree is traced by another process: the dump
    is refused, and whatever criu had seized already goes free."""
    with TreeRun(prog, f"traced-{comm}") as r:
        r.start()
        r.record()
        snap = r.snapshot()
        pid, tid = by_comm(r, comm)
        tracer = start_tracer(r, tid)
        try:
            img = r.imgdir("img")
            res = r.dump(img)
            check_refused(r, res, f"dump of {prog} with {comm} traced", [pid, tid],
                          ())
            check_tree_released(r, "after the refused dump", allowed_tracer=tracer.pid)
        finally:
            stop_tracer(r, tracer)
        r.check_running("after the refused dump", snap)
        r.compare("after the refused dump")
        r.finish()


# program, comm of the task at fault (None: every task but the root),
# what is refused, words one of which the error line must say
REFUSED_TREES = [
    ("refuse_userns", "ru-child", "a child in its own user namespace", ("user",)),
    ("thread_leader_exit", None, "a process whose main thread exited", ("main thread",)),
    # an orphan in a session whose leader lives but is no sibling of it:
    # nothing could fork it at restore
    ("tree_session_cousin", "tsc-cousin", "an orphan its session's leader can't fork",
     ("session",)),
]


@pytest.mark.parametrize("prog,comm,what,words", REFUSED_TREES,
                         ids=[t[0] for t in REFUSED_TREES])
def test_dump_refused_tree(prog: str, comm: str | None, what: str,
                           words: tuple[str, ...]) -> None:
    """Refused, naming the task at fault, and the tree goes on untouched."""
    with TreeRun(prog, "refused") as r:
        r.start()
        r.record()
        snap = r.snapshot()
        views = r.tree()
        culprits = [pid for pid, t in views.items()
                    if (t.threads[0][1] == comm if comm else pid != r.pid)]
        if not culprits:
            r.fail(f"no task named {comm} in the tree")
        img = r.imgdir("img")
        res = r.dump(img)
        check_refused(r, res, f"dump of {what}", culprits, words)
        check_tree_released(r, "after the refused dump")
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
            line = check_refused(r, res, "restore with a gone leader's pid taken",
                                 [gone[0]], ("session", "group"))
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
