"""The runner's side of the protocol with the test programs (no criu):
a program whose feature is missing is skipped with its reason, never
passed, and a skip once criu may have been at the task is a failure; and
the search for processes a failed restore left behind."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

import zdtm


def test_skip_before_ready():
    with zdtm.Run("zdtm_skip", "before", args=["before"]) as r:
        with pytest.raises(pytest.skip.Exception,
                           match=r"zdtm_skip: the feature is missing here \(before\)"):
            r.start()
        assert r.verdict() == "SKIP: the feature is missing here (before)"
    assert not r.dir.exists(), "a skipped run keeps its directory"


def test_skip_after_ready_fails():
    with zdtm.Run("zdtm_skip", "after", args=["after"]) as r:
        r.start()
        with pytest.raises(zdtm.ZdtmFailure, match=r"skip\(\) after test_ready\(\)"):
            r.finish()


def test_skip_exit_status_without_verdict_fails():
    with zdtm.Run("zdtm_skip", "bare", args=["bare"]) as r:
        with pytest.raises(zdtm.ZdtmFailure, match="a skip is both exit status 77"):
            r.start()


def test_leftovers_by_session_group_and_parent():
    """zdtm.leftovers() finds what a restore may leave: a process of the
    session or group of the dumped pid, whatever its pid, and any child of
    the runner."""
    leader = subprocess.Popen(["sh", "-c", "sleep 100 & exec sleep 100"],
                              start_new_session=True)
    child = subprocess.Popen(["sleep", "100"])
    try:
        deadline = time.monotonic() + 10
        while len(zdtm.session_members(leader.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        left = {p.pid for p in zdtm.leftovers(leader.pid)}
        members = set(zdtm.session_members(leader.pid))
        assert len(members) == 2 and members <= left, (members, left)
        assert child.pid in left, left
        assert os.getpid() not in left
    finally:
        for p in (leader, child):
            p.kill()
            p.wait()
        try:
            os.killpg(leader.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        zdtm.reap_session(leader.pid)
    assert not zdtm.leftovers(leader.pid)


def test_skip_if_pid_taken():
    """A restore refused for a pid in use skips only when an outside
    process holds it (the host's doing); a holder of the runner's (what
    criu may have left) or another error is no reason to skip."""
    def refused(pid: int) -> zdtm.CriuResult:
        return zdtm.CriuResult(["restore"], 1, "",
                               f"Error: restore failed: pid {pid} is in use\n", None)

    with zdtm.Run("mem_anon", "pid-taken") as r:
        with pytest.raises(pytest.skip.Exception, match=r"pid 1 was taken"):
            r.skip_if_pid_taken(refused(1))
        ours = subprocess.Popen(["sleep", "10"])
        try:
            no_skip(r, refused(ours.pid), "a holder of the runner's")
        finally:
            ours.kill()
            ours.wait()
        no_skip(r, zdtm.CriuResult(["restore"], 1, "", "Error: no images\n", None),
                "another error")


def no_skip(r: zdtm.Run, res: zdtm.CriuResult, what: str) -> None:
    """A skip here would hide the failure it must not excuse."""
    try:
        r.skip_if_pid_taken(res)
    except pytest.skip.Exception as e:
        pytest.fail(f"skipped for {what}: {e}")
