"""Processes of every shape, big: shapes.c builds N of a kind (threads,
memfds, POSIX timers, fds, areas, timerfds, epoll watches, queued RT
signals, inotify watches, seccomp filters...) at sizes past every limit
criu once had inside (a batch of fixed size, 4,096 threads a task, 128
filters a thread, 2^46-byte memfds); each is dumped and restored (plain
flavour) and the program checks every object afterwards.

Then the edges of the limits criu keeps (core/limits.c), which are the
kernel's: at the edge a task dumps and restores; one past it the dump
refuses, with one error line naming the task and the limit, and the task
goes on as it was. The machine's sysctls are only read; the fd limit is
criu's own RLIMIT_NOFILE, lowered for the criu runs that need it."""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
from pathlib import Path
from typing import Optional

import pytest

import buildpaths
import zdtm

pytestmark = pytest.mark.usefixtures("need_criu")

# Past: the restore batch held 897 entries (memfds), the dump's 256 (timers),
# restore took 4,096 threads a task and 128 own seccomp filters a thread,
# a thread's batch 256 entries (queued signals), memfds of 2^46 bytes.
BIG = [
    ("threads", 10000), ("memfds", 1000), ("ptimers", 5000), ("areas", 30000),
    ("fds", 15000), ("timerfds", 1000), ("epoll", 5000), ("rtsigs", 500),
    ("inotify", 1000), ("tfilters", 300), ("trtsigs", 1000), ("bigmemfd", 62),
]

LIMIT_INOTIFY_WD = 1 << 20      # core/limits.h


def sysctl(name: str) -> int:
    return int(Path("/proc/sys", name.replace(".", "/")).read_text())


def nr_areas(pid: int) -> int:
    """Areas as vm.max_map_count counts them ([vsyscall] is none)."""
    return sum("[vsyscall]" not in line
               for line in Path(f"/proc/{pid}/maps").read_text().splitlines())


def criu_limited(r: zdtm.Run, args: list[str], log: Path, nofile: int) -> zdtm.CriuResult:
    """criu with RLIMIT_NOFILE nofile (soft and hard): the most fds a task
    it restores may have."""
    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    r.ncriu += 1
    outp = r.dir / f"criu{r.ncriu}.stdout"
    errp = r.dir / f"criu{r.ncriu}.stderr"
    cmd = [zdtm.CRIU] + args
    with open(outp, "wb") as o, open(errp, "wb") as e:
        rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                            preexec_fn=lower, timeout=zdtm.CRIU_TIMEOUT).returncode
    res = zdtm.CriuResult(cmd, rc, outp.read_text(errors="replace"),
                          errp.read_text(errors="replace"), log)
    r.note(f"criu {args[0]} (RLIMIT_NOFILE {nofile}) -> {rc}")
    return res


def refused(r: zdtm.Run, res: zdtm.CriuResult, words: tuple[str, ...]) -> str:
    """The dump failed cleanly: one Error line, naming the task and the limit."""
    if res.returncode == 0:
        r.ours = False
        r.fail("the dump succeeded; it must refuse", res)
    errs = zdtm.error_lines(res.stderr)
    if res.returncode < 0 or len(errs) != 1:
        r.fail(f"expected exit > 0 and one Error line, got {res.returncode} and {len(errs)}",
               res)
    if str(r.pid) not in errs[0] or not all(w in errs[0] for w in words):
        r.fail(f"the Error line does not name task {r.pid} and {words}: {errs[0]!r}", res)
    return errs[0]


def dump_restore(r: zdtm.Run, snap: Optional[zdtm.Snapshot]) -> None:
    img = r.imgdir("img")
    r.dump_ok(img)
    r.restore_ok(img)
    r.check_running("after restore", snap)
    r.finish()


@pytest.mark.parametrize("kind,n", BIG, ids=[f"{k}={n}" for k, n in BIG])
def test_shape(kind: str, n: int) -> None:
    with zdtm.Run("shapes", f"{kind}-{n}", args=[f"{kind}={n}"]) as r:
        r.start()
        dump_restore(r, r.snapshot())


def test_areas_at_the_limit() -> None:
    """vm.max_map_count - 1 areas: criu's own (scratch area, trampoline)
    is the last one there may be; dumped and restored."""
    with zdtm.Run("shapes", "areas-edge", args=["maxareas=1"]) as r:
        r.start()
        want = sysctl("vm.max_map_count") - 1
        if nr_areas(r.pid) != want:
            r.fail(f"{nr_areas(r.pid)} areas, not vm.max_map_count - 1 = {want}")
        dump_restore(r, r.snapshot())


def test_areas_past_the_limit() -> None:
    """vm.max_map_count areas: no room for criu's one: refused by name."""
    with zdtm.Run("shapes", "areas-past", args=["maxareas=0"]) as r:
        r.start()
        if nr_areas(r.pid) != sysctl("vm.max_map_count"):
            r.fail(f"{nr_areas(r.pid)} areas, not vm.max_map_count")
        snap = r.snapshot()
        refused(r, r.dump(r.imgdir("img")), ("vm.max_map_count",))
        r.check_running("after the refused dump", snap)
        r.finish()


def room_named(r: zdtm.Run, line: str) -> int:
    """The RLIMIT_NOFILE a refused dump's Error line says criu needs."""
    m = re.search(r"(\d+) fds, and criu needs (\d+) more", line)
    if m is None:
        r.fail(f"the Error line does not say how many fds: {line!r}")
    return int(m[1]) + int(m[2])


def restore_limited(r: zdtm.Run, img: Path, room: int, snap: zdtm.Snapshot) -> None:
    """Restore img with criu's RLIMIT_NOFILE at room; the task must run on
    as in snap, and finish well."""
    res = criu_limited(r, ["restore", "-D", str(img), "-d", "-o", "restore.log", "-v4",
                           "--pidfile", str(img / "restore.pid")],
                       img / "restore.log", room)
    if res.returncode:
        r.fail(f"restore with room for {room} fds failed", res)
    r.alive = r.ours = True
    r.check_running("after restore", snap)
    r.finish()


def test_fd_room_edge() -> None:
    """A task whose fd table is full (1,000 slots, RLIMIT_NOFILE 1,000):
    criu's fds at restore go above it, up to criu's own RLIMIT_NOFILE. With
    exactly enough room the task dumps and restores; one slot less, the
    dump refuses and says how many criu needs."""
    with zdtm.Run("shapes", "fd-room", args=["nofile=1000"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        args = r.dump_cmd(img, [])
        line = refused(r, criu_limited(r, args, img / "dump.log", 1000), ("RLIMIT_NOFILE",))
        room = room_named(r, line)
        r.check_running("after the refused dump", snap)
        refused(r, criu_limited(r, args, img / "dump.log", room - 1), ("RLIMIT_NOFILE",))
        r.check_running("after the refused dump, one slot short", snap)
        res = criu_limited(r, args, img / "dump.log", room)
        if res.returncode:
            r.fail(f"dump with room for {room} fds failed", res)
        r.gone_after_dump(res)
        restore_limited(r, img, room, snap)


def test_fd_past_criu_limit() -> None:
    """An fd above what a task restored by this criu may have: refused."""
    with zdtm.Run("shapes", "fd-past", args=["fds=200"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        refused(r, criu_limited(r, r.dump_cmd(img, []), img / "dump.log", 100),
                ("RLIMIT_NOFILE",))
        r.check_running("after the refused dump", snap)
        r.finish()


def test_inotify_wd_at_the_limit() -> None:
    """wd 2^20: restore makes it with 2^20 - 1 dummy watches."""
    with zdtm.Run("shapes", "wd-edge", args=[f"wd={LIMIT_INOTIFY_WD}"]) as r:
        r.start()
        dump_restore(r, r.snapshot())


def test_inotify_wd_past_the_limit() -> None:
    with zdtm.Run("shapes", "wd-past", args=[f"wd={LIMIT_INOTIFY_WD + 1}"]) as r:
        r.start()
        snap = r.snapshot()
        refused(r, r.dump(r.imgdir("img")), ("inotify", str(LIMIT_INOTIFY_WD + 1)))
        r.check_running("after the refused dump", snap)
        r.finish()


def test_threads_past_threads_max() -> None:
    """A tree with more threads than kernel.threads-max can't exist here;
    its images (a thread list made longer) are refused by the restore's
    check, the one the dump runs, before anything is created."""
    with zdtm.Run("shapes", "threads-past", args=["threads=3"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        r.kill()
        crit = [str(buildpaths.CRIT)]
        js = subprocess.run(["python3"] + crit + ["decode", "--full", "-i",
                                                  str(img / "pstree.img")],
                            capture_output=True, text=True, check=True).stdout
        tree = json.loads(js)
        task = tree["entry"]["tasks"][0]
        more = sysctl("kernel.threads-max") + 1 - len(task["threads"])
        task["threads"] += list(range(10, 10 + more))
        src = r.dir / "pstree.json"
        src.write_text(json.dumps(tree))
        subprocess.run(["python3"] + crit + ["encode", "-i", str(src), "-o",
                                             str(img / "pstree.img")], check=True)
        before = {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")}
        res, _ = r.restore(img)
        line = refused(r, res, ("threads-max",))
        if {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")} != before:
            r.fail("the refused restore changed the images", res)
        if zdtm.proc_state(r.pid) is not None:
            r.fail(f"task {r.pid} exists after the refused restore ({line})", res)


@pytest.mark.parametrize("point", ["infect-area#2", "infect-executor"])
def test_dump_killed_while_grown(point: str) -> None:
    """criu killed after the leader's scratch area grew for 2,000 POSIX
    timers (the second area mapped, or the batch running in it): the task
    goes home on its own, nothing of criu's left in it, and is whole."""
    with zdtm.Run("shapes", f"grown-{point}", args=["ptimers=2000"]) as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), env=dict(os.environ, CRIU_FAULT=point))
        if res.returncode != -9:
            r.ours = res.returncode != 0 and r.ours
            r.fail(f"CRIU_FAULT={point}: criu exited with {res.returncode}, not by SIGKILL",
                   res)
        if "grows to" not in zdtm.tail(r.dir / "img" / "dump.log", 400):
            r.fail("the scratch area did not grow: the test does not test that", res)
        r.check_running(f"after criu was killed at {point}", snap)
        r.finish()
