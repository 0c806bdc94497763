"""Namespaces a tree makes for itself (Documentation/namespaces.md).

- Refused: a task in a user namespace of its own without maps, a child
  in a pid or network namespace nested in the tree's, or left in criu's
  mount namespace by a parent that unshared after forking it (nested
  ones made or joined are restored: the mntns_* programs) (the tree's
  root may have user, cgroup, network and mount namespaces of its own:
  test_userns.py, test_cgroup.py, test_net.py, Documentation/mounts.md and
  the mnt_* programs). criu must fail
  cleanly (one Error line naming the task and the namespace) and leave the
  task running unharmed.
- Pid namespaces: other zdtm programs run as the init of a pid namespace
  (--pidns), through dump and restore, must pass as they do outside one:
  signals, timers, threads, trees and sessions all go through pids.
- UTS: the host's own names are never touched by a restore."""
from __future__ import annotations

import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import zdtm
from test_errors import check_refused_dump
from test_file_locks import restore_refused

import buildpaths
sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")


REFUSED = {
    # argument of ns_refused -> words one of which the Error line must hold
    "user": ("user namespace",),
    # a nested mount namespace is restored (mntns_nested), one joined with setns
    # too (mntns_join); a task left in criu's by a parent that unshared after
    # forking it is not
    "mnt-before": ("mount namespace",),
    "netns-child": ("network namespace",),
    "pidns-child": ("pid namespace",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_ns_refused(what):
    with zdtm.Run("ns_refused", f"refused-{what}", args=[what]) as r:
        # the nested pid namespace is its child's: the line names that one
        check_refused_dump(r, f"a task in a {what} namespace", REFUSED[what],
                           names_task=not what.endswith(("-child", "-before")))


def mount_points() -> list[str]:
    """criu's namespace's mounts (ours), without their ids."""
    return [" ".join(line.split()[3:]) for line in
            Path("/proc/self/mountinfo").read_text().splitlines()]


def test_mntns_failed_restore_leaves_nothing():
    """The child's nested mount namespace can't be made again (the mount
    point of its tmpfs is gone): one Error line naming it, no task and no
    mount left behind (criu's namespace as it was), the images unchanged;
    with the directory back, the same images restore and the test passes."""
    with zdtm.Run("mntns_nested", "failed-nested") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        before = mount_points()
        point = r.dir / "mntns_nested.d" / "t"
        point.rmdir()
        restore_refused(r, img, "restore of a nested namespace without its mount point",
                        (str(point),))
        if mount_points() != before:
            r.fail("the failed restore changed criu's mounts")
        point.mkdir()
        r.restore_ok(img)
        r.finish()


def edit_mntns(src: Path, dst: Path, change: Callable[[dict[str, Any]], None]) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    doc = crit.read_image(dst / "mnt.img", full_bytes=True)
    change(doc["entry"])
    (dst / "mnt.img").write_bytes(crit.encode_image(doc))


def _root_maker(e: dict[str, Any]) -> None:
    e["nested"][0]["maker"] = e["maker"]


def _external(e: dict[str, Any]) -> None:
    e["nested"][0]["mounts"][-1]["kind"] = "MNT_EXTERNAL"
    e["nested"][0]["mounts"][-1]["ext_key"] = "x"


def _root_id(e: dict[str, Any]) -> None:
    e["nested"][0]["mounts"][-1]["id"] = e["mounts"][-1]["id"]


BAD_MNTNS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    # what is wrong in mnt.img -> (the change, words of the Error line)
    "root-maker": (_root_maker, "the root as its maker"),
    "external": (_external, "a kind a nested namespace can't have"),
    "root-id": (_root_id, "the id of a mount of the root's namespace"),
}


@pytest.mark.parametrize("bad", list(BAD_MNTNS))
def test_mntns_bad_image_refused(bad: str) -> None:
    """mnt.img's nested namespaces, damaged: one Error line naming what is
    wrong, nothing left behind, the images unchanged; the good images
    still restore."""
    change, words = BAD_MNTNS[bad]
    with zdtm.Run("mntns_shared_child", f"bad-{bad}") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        edited = r.imgdir("edited")
        edit_mntns(img, edited, change)
        restore_refused(r, edited, f"restore of mnt.img with {bad}", (words,))
        r.restore_ok(img)
        r.finish()


# Programs that say something through pids (signals, timers, threads, trees)
# and do not look themselves up in the runner's /proc by the pids they see
# (those would see other tasks there: /proc is the host's).
IN_PIDNS = [
    "mem_anon", "sig_pending", "sig_mask", "sig_altstack", "posix_timer_pending",
    "posix_timer_fire", "itimer_long", "itimer_fire", "timerfd_periodic",
    "timerfd_ticks", "thread_state", "task_rseq", "task_tid_address", "time_clocks",
    "sys_futex_timed", "creds_ids", "mem_shared_tree", "pipe_tree", "ns_uts",
    "tree_pgid_order", "thread_churn",
]


@pytest.mark.parametrize("name", IN_PIDNS)
def test_in_pidns(name):
    desc = zdtm.load_desc(name)
    if "plain" not in desc.flavors:
        pytest.fail(f"{name} has no plain flavour: take it out of IN_PIDNS")
    with zdtm.Run(name, "pidns", args=desc.args, pidns=True) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, desc.dump_opts)
        time.sleep(zdtm.GAP)
        r.restore_ok(img, desc.restore_opts)
        r.check_running("after restore in a pid namespace", snap)
        img2 = r.imgdir("img2")
        r.dump_ok(img2, desc.dump_opts)
        r.restore_ok(img2, desc.restore_opts)
        r.check_running("after the second restore in a pid namespace", snap)
        r.finish(desc.expect)


def test_uts_host_untouched():
    """The UTS test changes names in its namespaces, before and after
    restore: the host's stay as they were."""
    host = socket.gethostname()
    with open("/proc/sys/kernel/domainname") as f:
        domain = f.read()
    with zdtm.Run("ns_uts", "host") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        r.finish()
    with open("/proc/sys/kernel/domainname") as f:
        now = f.read()
    assert socket.gethostname() == host and now == domain, \
        f"host names changed: {host!r}/{domain!r} -> {socket.gethostname()!r}/{now!r}"
