"""Seccomp beyond the plain zdtm flavours (static/seccomp_*.c run those).

criu needs PTRACE_O_SUSPEND_SECCOMP to touch a task with seccomp: its
injected system calls must not meet the task's filters. The kernel refuses
that option to a tracer that is itself under seccomp, so a criu started
under an allow-all filter stands for every such kernel or setup: it must
refuse to dump or restore a task with seccomp (one Error line naming the
task, the task untouched, nothing left behind) and still handle a task
without it. A filter that can answer SECCOMP_RET_USER_NOTIF is refused. The
images keep SECCOMP_FILTER_FLAG_LOG and store a filter shared by threads
and a child once."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import buildpaths
import zdtm
from test_errors import check_clean_error

pytestmark = pytest.mark.usefixtures("need_criu")

CRIT = buildpaths.CRIT
SECCOMP_FILTER_FLAG_LOG = 2

# Runs criu (argv[1:]) under no_new_privs and a filter that allows everything.
WRAPPER = r'''#!/usr/bin/python3
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
ret_allow = ctypes.create_string_buffer(struct.pack("=HBBI", 0x06, 0, 0, 0x7fff0000), 8)
prog = Fprog(1, ctypes.addressof(ret_allow))
if libc.prctl(38, 1, 0, 0, 0) or libc.syscall(317, 1, 0, ctypes.byref(prog)):
    sys.exit("seccomp wrapper: %s" % os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
'''


@pytest.fixture
def filtered_criu(tmp_path, monkeypatch):
    """zdtm's criu runs under seccomp while the fixture is in use."""
    w = tmp_path / "criu-under-seccomp"
    w.write_text(WRAPPER + f"# real criu: {zdtm.CRIU}\n")
    w.chmod(0o700)
    real = zdtm.CRIU

    def use(on: bool) -> None:
        monkeypatch.setattr(zdtm, "CRIU", str(w) if on else real)
    use(True)
    orig = zdtm.Run.criu

    # the wrapper execs its first argument: the real criu
    def criu(self, args, *a, **kw):
        if zdtm.CRIU == str(w):
            return orig(self, [real] + args, *a, **kw)
        return orig(self, args, *a, **kw)
    monkeypatch.setattr(zdtm.Run, "criu", criu)
    return use


def decode(img: Path) -> dict:
    out = subprocess.run([sys.executable, str(CRIT), "decode", "-i", str(img)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["entry"]


def dump_refused(name: str, flavour: str, what: str, words: tuple[str, ...]) -> None:
    """The dump fails cleanly, naming the task; the task goes on and passes."""
    with zdtm.Run(name, flavour) as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"))
        line = check_clean_error(r, res, f"dump of {what}", words, r.pid)
        r.note(f"refused: {line}")
        r.check_running("after the refused dump", snap)
        r.finish()


def test_dump_refused_without_suspend(filtered_criu):
    dump_refused("seccomp_errno", "no-suspend-dump", "a task with seccomp by a filtered criu",
                 ("seccomp",))


def test_task_without_seccomp_by_filtered_criu(filtered_criu):
    """Without the option criu still dumps and restores a task with no seccomp."""
    with zdtm.Run("creds_nnp", "no-suspend-plain") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        r.check_running("after restore", snap)
        r.finish()


def test_restore_refused_without_suspend(filtered_criu):
    with zdtm.Run("seccomp_errno", "no-suspend-restore") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        filtered_criu(False)
        r.dump_ok(img)
        filtered_criu(True)
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore of a task with seccomp by a filtered criu",
                                 ("seccomp",), r.pid)
        r.note(f"refused: {line}")
        if zdtm.pid_exists(r.pid):
            r.fail(f"pid {r.pid} exists after the refused restore")
        # the images are good: a criu that may suspend seccomp restores them
        filtered_criu(False)
        r.restore_ok(img)
        r.check_running("after restore", snap)
        r.finish()


def test_dump_refused_user_notif():
    dump_refused("seccomp_notify", "refused", "a task with a USER_NOTIF filter",
                 ("user_notif",))


def test_images_keep_flags_and_sharing():
    with zdtm.Run("seccomp_errno", "images") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        filters = decode(img / "seccomp.img")["filters"]
        if len(filters) != 1 or filters[0].get("flags") != SECCOMP_FILTER_FLAG_LOG:
            r.fail(f"seccomp.img: {filters}, not one filter with SECCOMP_FILTER_FLAG_LOG")
        r.finish()
    with zdtm.Run("seccomp_chain", "images") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        filters = decode(img / "seccomp.img")["filters"]
        # A, B shared by both threads and the child, C the child's own, E its thread's
        if [f.get("prev", 0) for f in filters] != [0, 1, 2, 3]:
            r.fail(f"seccomp.img has filters {filters}, not the chain A <- B <- C <- E")
        tasks = sorted(img.glob("seccomp-*.img"))
        newest = [sorted(t["filter"] for t in decode(p)["threads"]) for p in tasks]
        if sorted(newest) != [[2, 2], [3, 4]]:
            r.fail(f"the threads' newest filters are {newest}, not [2, 2] and [3, 4]")
        r.finish()
