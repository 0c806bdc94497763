"""Orphans and their reaping, for whatever here starts tasks that criu
restores: a restored task is an orphan once criu exits, and PID 1 here does
not reap orphans. So the zdtm runner (zdtm.py), test/unit/test_crit.py and
the benchmarks of test/bench make themselves child subreapers, and the
orphans come to them to be reaped.

No side effects on import: become_subreaper() is called by those that want
it (zdtm.py at its import).
"""
from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path
from typing import Optional

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphaned descendants (restored tasks) become our children."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "prctl(PR_SET_CHILD_SUBREAPER): " + os.strerror(err))


def reap_leftovers() -> None:
    """Reap whatever got reparented to us and has exited."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def proc_state(pid: int) -> Optional[str]:
    """The state letter of /proc/PID/stat, None when there is no such task."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat[stat.rindex(")") + 2]


def is_child(pid: int) -> bool:
    """pid is our child (reapable), whether it exited or not; not reaped."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def wait_gone(pid: int, timeout: float) -> Optional[int]:
    """Reap pid when it is our child, or wait until it is gone; its exit
    code (0 for one that was not ours), None when it is still there after
    timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            # not ours: all we can do is wait for it to vanish
            if proc_state(pid) in (None, "X"):
                return 0
            got, status = 0, 0
        if got == pid:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def kill_and_reap(pid: int, timeout: float = 10.0) -> bool:
    """SIGKILL pid and reap it, or, when it is not our child, wait until it
    is gone. False when it is still there after timeout."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            # not ours: someone else reaps it
            if proc_state(pid) in (None, "X"):
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
