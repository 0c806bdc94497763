"""The check that tests leave the host as they found it (hoststate.py): it
must name each kind of change the issue saw (another hostname, an IPC
sysctl, a mount, /proc/sys remounted read-only), the test that made it,
and fail the session too. The leaking tests run in a pytest session of
their own, in UTS, IPC and mount namespaces of its own, so the host never
sees the changes."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hoststate

HERE = Path(__file__).resolve().parent

INNER_CONFTEST = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from hoststate import host_unchanged_by_session, host_unchanged_by_test  # noqa
"""

INNER_TESTS = """
import socket
import subprocess
from pathlib import Path


def test_clean():
    pass


def test_hostname():
    socket.sethostname("zdtm-leak")


def test_domainname():
    Path("/proc/sys/kernel/domainname").write_text("leak.zdtm")


def test_ipc_sysctl():
    p = Path("/proc/sys/kernel/msgmnb")
    p.write_text(str(int(p.read_text()) + 1))


def test_mount(tmp_path):
    subprocess.run(["mount", "-t", "tmpfs", "zdtm-leak", str(tmp_path)], check=True)


def test_proc_sys_read_only():
    subprocess.run(["mount", "--bind", "/proc/sys", "/proc/sys"], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", "/proc/sys"], check=True)


def test_cgroup():
    # a cgroup below a directory named after this session: a real one of
    # the host, which the outer test removes
    import os
    import hoststate
    mnt = hoststate.cgroup_mounts(Path("/proc/self/mountinfo").read_text())[0]
    os.makedirs(f"{mnt}/zdtm-leak-{os.getpid()}/x")


def test_last_clean():
    # the session's check fails at its teardown (pytest 7 shows only one
    # error of a teardown: this one changes nothing itself)
    pass
"""


def test_mounts_parse():
    info = textwrap.dedent("""\
        22 27 0:21 / /proc rw,relatime shared:5 - proc proc rw
        40 22 0:40 / /proc/sys ro,relatime - proc proc rw
        41 27 0:41 / /a\\040b rw - tmpfs x\\040y rw,size=4k
        42 41 0:42 / /a\\040b rw - tmpfs z rw
        """)
    m = hoststate.mounts(info)
    assert m["mount /proc"] == "proc proc root=/ rw,relatime rw [shared:5]"
    assert m["mount /proc/sys"] == "proc proc root=/ ro,relatime rw"
    assert m["mount /a b"] == "tmpfs x y root=/ rw rw,size=4k | tmpfs z root=/ rw rw"


def test_diff_names_each_change():
    before = {"a": "1", "b": "2", "c": "3"}
    after = {"a": "1", "b": "20", "d": "4"}
    assert hoststate.diff(before, after) == [
        "b: '2' -> '20'", "c: gone (was 3)", "d: appeared: 4"]
    assert hoststate.diff(before, dict(before)) == []


def test_snapshot_is_stable():
    assert hoststate.diff(hoststate.snapshot(), hoststate.snapshot()) == []


def test_leaks_are_caught(tmp_path):
    if not shutil.which("unshare") or not shutil.which("mount"):
        pytest.fail("unshare and mount (util-linux) are needed")
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    (tmp_path / "test_leaks.py").write_text(INNER_TESTS)
    try:
        r = subprocess.run(
            ["unshare", "--uts", "--ipc", "--mount", "--propagation", "private",
             sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "base"),
             str(tmp_path)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    finally:
        mnt = hoststate.cgroup_mounts(Path("/proc/self/mountinfo").read_text())[0]
        for d in glob.glob(f"{mnt}/zdtm-leak-*/x"):
            os.rmdir(d)
            os.rmdir(os.path.dirname(d))
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    # each leaking test fails at its teardown, naming what it changed
    for test, change in [
            ("test_hostname", "sysctl kernel/hostname: "),
            ("test_domainname", "sysctl kernel/domainname: '(none)' -> 'leak.zdtm'"),
            ("test_ipc_sysctl", "sysctl kernel/msgmnb: "),
            ("test_mount", "appeared: tmpfs zdtm-leak"),
            ("test_proc_sys_read_only", "mount /proc/sys: appeared: proc proc "
                                        "root=/sys ro,"),
            ("test_cgroup", f"cgroup {mnt}/zdtm-leak-")]:
        assert f"ERROR at teardown of {test}" in out, out
        assert f"test_leaks.py::{test} left the host changed" in out, out
        assert change in out, f"{test}: no line with {change!r}:\n{out}"
    assert "-> 'zdtm-leak'" in out, out
    assert "teardown of test_clean " not in out, out
    assert "test_last_clean left" not in out, out
    assert " 7 errors" in out, out
    # and the session as a whole, with every change
    assert "ERROR at teardown of test_last_clean" in out, out
    session = out[out.index("the session left the host changed"):]
    for change in ("kernel/hostname", "kernel/domainname", "kernel/msgmnb", "zdtm-leak",
                   "mount /proc/sys"):
        assert change in session, session
