"""Cgroups, v1 and v2 (Documentation/cgroups.md).

Every test makes its cgroups below `zdtm-cg-PID` (PID: this runner) in the
runner's own cgroup of each hierarchy it uses, and removes them; hoststate
checks that none is left. The program, cgroup_member, joins the cgroups
its arguments name (a thread and a child too, a cgroup namespace) and
checks after the restore that each of them sees the cgroups it saw.

- v1 (cpu, memory, pids, cpuset, devices) with limits, restored by each
  --manage-cgroups mode: which cgroups must exist or are created, which
  properties are written; the task's cgroups as the host sees them.
- v2 (the unified hierarchy, a hybrid host's too): a threaded subtree with
  the leader and a thread in cgroups of their own, the core properties
  (cgroup.max.descendants, cgroup.max.depth, cgroup.type).
- --cgroup-root on dump and on restore.
- A cgroup namespace, with a child in another cgroup of it.
- --freeze-cgroup (v1 freezer and v2), with --leave-running: a cgroup frozen
  before the dump is frozen after it, one that was not is not; a failed dump
  leaves it as it was.
- A failed restore leaves no cgroup behind (a file gone; strict finding one).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

import zdtm
from hoststate import cgroup_mounts, read
from test_errors import check_clean_error

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

PROG = "cgroup_member"
TAG = f"zdtm-cg-{os.getpid()}"


def hierarchies() -> dict[str, str]:
    """'cpu', 'memory'... and 'unified' -> the mount point of that hierarchy."""
    out: dict[str, str] = {}
    for line in read("/proc/self/mountinfo").splitlines():
        pre, _, post = line.partition(" - ")
        f, g = pre.split(), post.split()
        if len(f) < 5 or len(g) < 3 or f[3] != "/":
            continue
        if g[0] == "cgroup2":
            out.setdefault("unified", f[4])
        elif g[0] == "cgroup":
            for opt in g[2].split(","):
                out.setdefault(opt, f[4])
    return out


def own_cgroup(ctrl: str) -> str:
    """The runner's cgroup in the hierarchy of @ctrl ('unified': v2)."""
    for line in read("/proc/self/cgroup").splitlines():
        _, ctrls, path = line.split(":", 2)
        if (ctrl == "unified" and not ctrls) or ctrl in ctrls.split(","):
            return path
    raise KeyError(ctrl)


HIER = hierarchies()
V1 = [c for c in ("cpu", "memory", "pids", "cpuset", "devices") if c in HIER and
      HIER[c] != HIER.get("unified")]


def task_cgroup(pid: int, ctrl: str, tid: int = 0) -> str:
    path = f"/proc/{pid}/task/{tid}/cgroup" if tid else f"/proc/{pid}/cgroup"
    for line in Path(path).read_text().splitlines():
        _, ctrls, p = line.split(":", 2)
        if (ctrl == "unified" and not ctrls) or ctrl in ctrls.split(","):
            return p
    raise KeyError(ctrl)


class Cgroups:
    """The cgroups of one test: NAME below zdtm-cg-PID in each hierarchy."""

    def __init__(self, name: str):
        self.name = name

    def top(self, ctrl: str) -> str:
        own = own_cgroup(ctrl)
        return f"{HIER[ctrl]}{'' if own == '/' else own}/{TAG}"

    def path(self, ctrl: str, sub: str = "") -> str:
        """Directory of this test's cgroup @sub in @ctrl's hierarchy."""
        return f"{self.top(ctrl)}/{self.name}" + (f"/{sub}" if sub else "")

    def rel(self, ctrl: str, sub: str = "") -> str:
        """The same as /proc/PID/cgroup shows it."""
        return self.path(ctrl, sub)[len(HIER[ctrl]):]

    def make(self, ctrl: str, sub: str = "") -> str:
        d = self.path(ctrl, sub)
        os.makedirs(d, exist_ok=True)
        if ctrl == "cpuset":
            # v1 cpusets start empty: nothing could join
            p = self.top(ctrl)
            for part in [""] + f"{self.name}/{sub}".strip("/").split("/"):
                p = f"{p}/{part}" if part else p
                for f in ("cpuset.cpus", "cpuset.mems"):
                    if not Path(p, f).read_text().strip():
                        parent = os.path.dirname(p)
                        Path(p, f).write_text(Path(parent, f).read_text())
        return d

    def write(self, ctrl: str, sub: str, f: str, value: str) -> None:
        Path(self.path(ctrl, sub), f).write_text(value)

    def read(self, ctrl: str, sub: str, f: str) -> str:
        return Path(self.path(ctrl, sub), f).read_text().strip()

    def exists(self, ctrl: str, sub: str = "") -> bool:
        return os.path.isdir(self.path(ctrl, sub))

    def remove(self) -> None:
        """Every cgroup of the test in every hierarchy (a --cgroup-root for
        all of them makes some in each), deepest first; what still runs in
        one (a failed test's task) is killed first."""
        own = {line.split(":", 2)[2] for line in read("/proc/self/cgroup").splitlines()}
        tops = [f"{m}{'' if o == '/' else o}/{TAG}" for m in cgroup_mounts(
            read("/proc/self/mountinfo")) for o in own]
        for top in tops:
            d = f"{top}/{self.name}"
            for dirpath, _dirs, _files in os.walk(d, topdown=False):
                empty(dirpath)
            try:
                os.rmdir(top)
            except OSError:
                pass    # another test's cgroups are there


def empty(d: str) -> None:
    """Removes cgroup @d, killing what is left in it."""
    thaw(d)
    for _ in range(200):
        for p in read(f"{d}/cgroup.procs").split():
            try:
                os.kill(int(p), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        try:
            os.rmdir(d)
            return
        except OSError:
            time.sleep(0.01)


def thaw(d: str) -> None:
    for f, v in (("cgroup.freeze", "0"), ("freezer.state", "THAWED")):
        if os.path.exists(f"{d}/{f}"):
            Path(d, f).write_text(v)


@pytest.fixture
def cg(request: pytest.FixtureRequest) -> Iterator[Cgroups]:
    c = Cgroups(request.node.name.replace("[", "-").replace("]", ""))
    yield c
    c.remove()


@pytest.fixture(autouse=True)
def _need_criu():
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


def need(*ctrls: str) -> None:
    missing = [c for c in ctrls if c not in HIER or (c != "unified" and c not in V1 and
                                                      c != "freezer")]
    if missing:
        pytest.skip(f"no cgroup hierarchy for {', '.join(missing)} here")


def restore_fails(r: zdtm.Run, img: Path, opts: list[str], what: str,
                  words: tuple[str, ...]) -> str:
    res, _ = r.restore(img, opts)
    line = check_clean_error(r, res, what, words)
    r.alive = False
    assert not zdtm.pid_exists(r.pid), f"{what}: task {r.pid} is there after the failure"
    return line


# ----------------------------------------------------------------- v1

LIMITS: dict[str, list[tuple[str, str, str]]] = {
    # ctrl -> (file, dumped value, another value), written in this order
    "cpu": [("cpu.cfs_period_us", "100000", "200000"), ("cpu.cfs_quota_us", "50000", "70000"),
            ("cpu.shares", "512", "256")],
    "memory": [("memory.limit_in_bytes", "67108864", "100663296"),
               ("memory.soft_limit_in_bytes", "33554432", "50331648")],
    "pids": [("pids.max", "77", "99")],
    "devices": [],
    "cpuset": [],
}
DEVICES = "c 1:3 rwm\nc 1:5 rwm"


def make_v1(cg: Cgroups) -> list[str]:
    """Cgroup 'lim' in each v1 hierarchy with the dumped limits; join args."""
    args = []
    for ctrl in V1:
        cg.make(ctrl, "lim")
        for f, v, _ in LIMITS[ctrl]:
            cg.write(ctrl, "lim", f, v)
        if ctrl == "devices":
            cg.write(ctrl, "lim", "devices.deny", "a")
            for line in DEVICES.splitlines():
                cg.write(ctrl, "lim", "devices.allow", line)
        args.append(f"join:{cg.path(ctrl, 'lim')}")
    return args


def change_v1(cg: Cgroups) -> None:
    for ctrl in V1:
        for f, _, v in LIMITS[ctrl]:
            cg.write(ctrl, "lim", f, v)
        if ctrl == "devices":
            cg.write(ctrl, "lim", "devices.allow", "c 1:7 rwm")


def check_v1(r: zdtm.Run, cg: Cgroups, dumped: bool) -> None:
    """The task in its cgroups; the limits the dumped ones or the others."""
    for ctrl in V1:
        assert task_cgroup(r.pid, ctrl) == cg.rel(ctrl, "lim"), ctrl
        for f, v, other in LIMITS[ctrl]:
            now = cg.read(ctrl, "lim", f)
            assert now == (v if dumped else other), f"{ctrl} {f}: {now}"
        if ctrl == "devices":
            now = cg.read(ctrl, "lim", "devices.list")
            assert (now == DEVICES) == dumped, f"devices.list: {now!r}"


@pytest.mark.parametrize("mode", ["none", "props", "soft", "full", "strict", "ignore"])
def test_v1_modes(cg: Cgroups, mode: str) -> None:
    """none and props restore into the cgroups that are there (props writes
    the dumped limits over changed ones); soft, full and strict make them
    again, with their limits; ignore leaves the task in criu's cgroups."""
    if not V1:
        pytest.skip("no v1 cgroup hierarchy here")
    with zdtm.Run(PROG, f"v1-{mode}", args=make_v1(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        if mode in ("none", "props"):
            change_v1(cg)
        else:
            cg.remove()
        r.restore_ok(img, [f"--manage-cgroups={mode}"])
        if mode == "ignore":
            for ctrl in V1:
                assert task_cgroup(r.pid, ctrl) == own_cgroup(ctrl), ctrl
                assert not cg.exists(ctrl, "lim"), f"ignore made {cg.path(ctrl, 'lim')}"
            r.finish("fail")    # the task sees other cgroups: it says so
            return
        check_v1(r, cg, dumped=mode != "none")
        r.finish()


def test_v1_soft_keeps_existing(cg: Cgroups) -> None:
    """soft (the default) writes no property of a cgroup it did not make;
    full writes them all."""
    if not V1:
        pytest.skip("no v1 cgroup hierarchy here")
    with zdtm.Run(PROG, "v1-soft-existing", args=make_v1(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        change_v1(cg)
        r.restore_ok(img)
        check_v1(r, cg, dumped=False)
        img2 = r.imgdir("img2")
        r.dump_ok(img2)
        r.restore_ok(img2, ["--manage-cgroups", "full"])
        check_v1(r, cg, dumped=False)   # the second dump saw the changed values
        r.finish()


def test_v1_strict_refuses_existing(cg: Cgroups) -> None:
    """strict wants to make every cgroup: one that is there is refused
    before anything runs, and the cgroups it made meanwhile are gone."""
    if len(V1) < 2:
        pytest.skip("fewer than two v1 cgroup hierarchies here")
    with zdtm.Run(PROG, "v1-strict", args=make_v1(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        # criu goes through the hierarchies as /proc/self/cgroup lists them
        order = [c for line in read("/proc/self/cgroup").splitlines()
                 for c in line.split(":")[1].split(",") if c in V1]
        keep = order[-1]
        for ctrl in V1:
            if ctrl != keep:
                os.rmdir(cg.path(ctrl, "lim"))
                os.rmdir(cg.path(ctrl))
        line = restore_fails(r, img, ["--manage-cgroups=strict"],
                             "strict over an existing cgroup", ("exists",))
        assert cg.rel(keep, "lim") in line, line
        assert "Removed cgroup" in (img / "restore.log").read_text()
        for ctrl in V1:
            if ctrl != keep:
                assert not cg.exists(ctrl), f"the failed restore left {cg.path(ctrl)}"
        assert cg.exists(keep, "lim")


def test_none_wants_them(cg: Cgroups) -> None:
    """none and props restore into cgroups that exist: a missing one is
    refused, naming it."""
    if not V1:
        pytest.skip("no v1 cgroup hierarchy here")
    with zdtm.Run(PROG, "v1-none-missing", args=make_v1(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.remove()
        line = restore_fails(r, img, ["--manage-cgroups=none"], "none without the cgroups",
                             ("does not exist",))
        assert TAG in line, line
        for ctrl in V1:
            assert not cg.exists(ctrl)


# ----------------------------------------------------------------- v2

def make_v2(cg: Cgroups) -> list[str]:
    """A threaded subtree: 'dom' (the threaded domain, with core limits),
    'dom/t1' for the task and 'dom/t2' for one of its threads."""
    cg.make("unified", "dom")
    cg.write("unified", "dom", "cgroup.max.descendants", "5")
    cg.write("unified", "dom", "cgroup.max.depth", "3")
    for t in ("t1", "t2"):
        cg.make("unified", f"dom/{t}")
        cg.write("unified", f"dom/{t}", "cgroup.type", "threaded")
    return [f"join:{cg.path('unified', 'dom/t1')}", f"thread:{cg.path('unified', 'dom/t2')}"]


def check_v2(r: zdtm.Run, cg: Cgroups) -> None:
    tids = sorted(int(t) for t in os.listdir(f"/proc/{r.pid}/task"))
    assert task_cgroup(r.pid, "unified") == cg.rel("unified", "dom/t1")
    other = [t for t in tids if t != r.pid]
    assert len(other) == 1
    assert task_cgroup(r.pid, "unified", other[0]) == cg.rel("unified", "dom/t2")
    assert cg.read("unified", "dom", "cgroup.max.descendants") == "5"
    assert cg.read("unified", "dom", "cgroup.max.depth") == "3"
    assert cg.read("unified", "dom", "cgroup.type") == "domain threaded"
    for t in ("t1", "t2"):
        assert cg.read("unified", f"dom/{t}", "cgroup.type") == "threaded"


@pytest.mark.parametrize("mode", ["soft", "strict"])
def test_v2_threaded(cg: Cgroups, mode: str) -> None:
    """v2 cgroups made again, the threaded ones threaded, with the leader
    and its thread each in its own."""
    need("unified")
    with zdtm.Run(PROG, f"v2-{mode}", args=make_v2(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.remove()
        r.restore_ok(img, [f"--manage-cgroups={mode}"])
        check_v2(r, cg)
        r.finish()


def test_v2_props_over_existing(cg: Cgroups) -> None:
    """props writes the dumped values into cgroups that are there."""
    need("unified")
    with zdtm.Run(PROG, "v2-props", args=make_v2(cg)) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.write("unified", "dom", "cgroup.max.descendants", "9")
        cg.write("unified", "dom", "cgroup.max.depth", "max")
        r.restore_ok(img, ["--manage-cgroups=props"])
        check_v2(r, cg)
        r.finish()


# ----------------------------------------------------------- --cgroup-root

def test_cgroup_root_restore(cg: Cgroups) -> None:
    """--cgroup-root moves the tree's root: for every hierarchy, and for
    one named (pids here) elsewhere; the cgroups below it follow."""
    ctrls = [c for c in ("cpu", "pids") if c in V1] + (["unified"] if "unified" in HIER else [])
    # one path for every hierarchy: those where the runner is in the same cgroup
    ctrls = [c for c in ctrls if ctrls and own_cgroup(c) == own_cgroup(ctrls[0])]
    if not ctrls:
        pytest.skip("no cgroup hierarchy to use here")
    args = []
    for c in ctrls:
        cg.make(c, "a/b")
        args.append(f"join:{cg.path(c, 'a/b')}")
    if "pids" in ctrls:
        cg.write("pids", "a/b", "pids.max", "55")
    with zdtm.Run(PROG, "root", args=args) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.remove()
        for c in ctrls:
            cg.make(c)      # the parent of the new roots
        opts = ["--cgroup-root", cg.rel(ctrls[0], "moved")]
        if "pids" in ctrls:
            opts += ["--cgroup-root", f"pids:{cg.rel('pids', 'elsewhere')}"]
        r.restore_ok(img, opts)
        for c in ctrls:
            want = cg.rel(c, "elsewhere" if c == "pids" else "moved")
            assert task_cgroup(r.pid, c) == want, c
        if "pids" in ctrls:
            assert cg.read("pids", "elsewhere", "pids.max") == "55"
        r.finish("fail")    # it sees other cgroups than it was in


def test_cgroup_root_dump(cg: Cgroups) -> None:
    """--cgroup-root on dump names a root above the task's cgroup: the
    cgroups between are recorded with their modes and made again."""
    need("pids")
    cg.make("pids", "top/mid/leaf")
    os.chmod(cg.path("pids", "top/mid"), 0o750)
    cg.write("pids", "top/mid", "pids.max", "40")
    cg.write("pids", "top/mid/leaf", "pids.max", "30")
    with zdtm.Run(PROG, "root-dump", args=[f"join:{cg.path('pids', 'top/mid/leaf')}"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--cgroup-root", f"pids:{cg.rel('pids', 'top')}"])
        cg.remove()
        r.restore_ok(img)
        assert task_cgroup(r.pid, "pids") == cg.rel("pids", "top/mid/leaf")
        assert os.stat(cg.path("pids", "top/mid")).st_mode & 0o7777 == 0o750
        assert cg.read("pids", "top/mid", "pids.max") == "40"
        assert cg.read("pids", "top/mid/leaf", "pids.max") == "30"
        r.finish()


def test_cgroup_root_outside(cg: Cgroups) -> None:
    """A --cgroup-root that does not hold the task is refused at dump,
    naming the task, and the task runs on."""
    need("pids")
    cg.make("pids", "in")
    cg.make("pids", "out")
    with zdtm.Run(PROG, "root-outside", args=[f"join:{cg.path('pids', 'in')}"]) as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), ["--cgroup-root", f"pids:{cg.rel('pids', 'out')}"])
        check_clean_error(r, res, "a root that does not hold the task", ("cgroup root",),
                          r.pid)
        r.check_running("after the refused dump", snap)
        r.finish()


@pytest.mark.parametrize("value", ["/a/../b", "x", "cpu:", "/a//b"])
def test_cgroup_root_bad(value: str) -> None:
    """A --cgroup-root that is no absolute cgroup path: one line naming it,
    nothing restored."""
    with zdtm.Run(PROG, "root-bad") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        line = restore_fails(r, img, ["--cgroup-root", value], "a bad --cgroup-root",
                             ("cgroup-root",))
        assert value.split(":")[0] in line, line


# ------------------------------------------------------ cgroup namespace

def test_cgroup_ns(cg: Cgroups) -> None:
    """A task that made a cgroup namespace in 'ns', then moved to 'ns/sub',
    with a child in 'ns/kid': the namespace is rooted at 'ns' again, each
    sees what it saw (the program checks), the host sees the same paths."""
    ctrls = [c for c in ("pids", "unified") if c in HIER and (c == "unified" or c in V1)]
    if not ctrls:
        pytest.skip("no cgroup hierarchy to use here")
    args = []
    for c in ctrls:
        for sub in ("ns/sub", "ns/kid"):
            cg.make(c, sub)
        args.append(f"join:{cg.path(c, 'ns')}")
    args.append("ns")
    args += [f"join:{cg.path(c, 'ns/sub')}" for c in ctrls]
    args += [f"child:{cg.path(ctrls[0], 'ns/kid')}"]
    with zdtm.Run(PROG, "ns", args=args) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.remove()
        r.restore_ok(img)
        ns = os.readlink(f"/proc/{r.pid}/ns/cgroup")
        assert ns != os.readlink("/proc/self/ns/cgroup")
        kids = Path(f"/proc/{r.pid}/task/{r.pid}/children").read_text().split()
        assert len(kids) == 1 and os.readlink(f"/proc/{kids[0]}/ns/cgroup") == ns
        for c in ctrls:
            assert task_cgroup(r.pid, c) == cg.rel(c, "ns/sub")
        assert task_cgroup(int(kids[0]), ctrls[0]) == cg.rel(ctrls[0], "ns/kid")
        r.finish()


# ------------------------------------------------------- --freeze-cgroup

def frozen(d: str) -> bool:
    if os.path.exists(f"{d}/cgroup.events"):
        return "frozen 1" in read(f"{d}/cgroup.events")
    return read(f"{d}/freezer.state") == "FROZEN"


def freeze(d: str) -> None:
    if os.path.exists(f"{d}/cgroup.freeze"):
        Path(d, "cgroup.freeze").write_text("1")
    else:
        Path(d, "freezer.state").write_text("FROZEN")
    deadline = time.monotonic() + 10
    while not frozen(d):
        assert time.monotonic() < deadline, f"{d} does not freeze"
        time.sleep(0.01)


@pytest.mark.parametrize("before", ["thawed", "frozen"])
@pytest.mark.parametrize("kind", ["v1", "v2"])
def test_freeze_cgroup(cg: Cgroups, kind: str, before: str) -> None:
    """--freeze-cgroup with --leave-running: the tree (a task and a child)
    is dumped whole, and its cgroup is as it was found: frozen again (as
    CRI-O wants after its pause) or running; the images restore."""
    ctrl = "freezer" if kind == "v1" else "unified"
    need(ctrl)
    d = cg.make(ctrl, "fz")
    with zdtm.Run(PROG, f"freeze-{kind}-{before}", args=[f"join:{d}", f"child:{d}"]) as r:
        r.start()
        if before == "frozen":
            freeze(d)
        img = r.imgdir("img")
        res = r.dump(img, ["--freeze-cgroup", d], leave_running=True)
        if res.returncode:
            r.fail("criu dump --freeze-cgroup failed", res)
        assert frozen(d) == (before == "frozen"), f"{d}: frozen {frozen(d)} after the dump"
        assert "Froze cgroup" in (img / "dump.log").read_text()
        assert zdtm.tracer_pid(r.pid) == 0
        thaw(d)
        r.check_running("after the dump")
        r.kill()
        r.restore_ok(img)
        r.finish()


@pytest.mark.parametrize("before", ["thawed", "frozen"])
def test_freeze_cgroup_failed_dump(cg: Cgroups, before: str) -> None:
    """A dump that fails after the freeze (a socket is refused) leaves the
    cgroup as it was and the task running."""
    ctrl = "freezer" if "freezer" in HIER else "unified"
    need(ctrl)
    d = cg.make(ctrl, "fz")
    with zdtm.Run(PROG, f"freeze-fail-{before}", extra="socket", args=[f"join:{d}"]) as r:
        r.start()
        snap = r.snapshot()
        if before == "frozen":
            freeze(d)
        res = r.dump(r.imgdir("img"), ["--freeze-cgroup", d])
        check_clean_error(r, res, "a refused dump with --freeze-cgroup", ("socket",))
        assert frozen(d) == (before == "frozen")
        thaw(d)
        r.check_running("after the refused dump", snap)
        r.finish()


def test_freeze_cgroup_bad_path(cg: Cgroups) -> None:
    """A path that is no freezer cgroup: one line naming it, nothing done."""
    with zdtm.Run(PROG, "freeze-bad") as r:
        r.start()
        res = r.dump(r.imgdir("img"), ["--freeze-cgroup", "/proc"])
        line = check_clean_error(r, res, "--freeze-cgroup /proc", ("cgroup",))
        assert "/proc" in line
        r.check_running("after the refused dump")
        r.finish()


# ----------------------------------------------------------- failures

def test_failed_restore_leaves_no_cgroup(cg: Cgroups, tmp_path: Path) -> None:
    """A restore that fails once the cgroups are made and the task is in
    them (a file it had open is gone) removes every cgroup it made."""
    ctrls = V1 + (["unified"] if "unified" in HIER else [])
    if not ctrls:
        pytest.skip("no cgroup hierarchy to use here")
    held = tmp_path / "held"
    held.write_text("x")
    args = []
    for c in ctrls:
        cg.make(c, "f/g")
        args.append(f"join:{cg.path(c, 'f/g')}")
    with zdtm.Run(PROG, "failed-restore", args=args + [f"hold:{held}"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        cg.remove()
        held.unlink()
        restore_fails(r, img, [], "a restore whose file is gone", ("held",))
        log = (img / "restore.log").read_text()
        assert "Created cgroup" in log, "the restore failed before it made the cgroups"
        for c in ctrls:
            assert not cg.exists(c), f"the failed restore left {cg.path(c)}"


# ----------------------------------------------------------------- RPC

def test_rpc(cg: Cgroups) -> None:
    """Over RPC, as runc asks: freeze_cgroup on dump (with leave_running),
    then manage_cgroups_mode (strict) and cg_root (one hierarchy moved) on
    restore."""
    import rpcclient as rpc
    from test_rpc import adopt, expect_ok, rpc_dump, rpc_restore

    fz = "freezer" if "freezer" in HIER else "unified"
    need(fz, "pids")
    d = cg.make(fz, "fz")
    cg.make("pids", "p")
    cg.write("pids", "p", "pids.max", "66")
    args = [f"join:{d}", f"join:{cg.path('pids', 'p')}"]
    with zdtm.Run(PROG, "rpc", args=args) as r:
        r.start()
        img = r.imgdir("img")
        resp = rpc_dump(r, img, freeze_cgroup=d, leave_running=True)
        expect_ok(r, resp, "dump", img / "dump.log")
        assert "Froze cgroup" in (img / "dump.log").read_text()
        assert not frozen(d)
        r.kill()
        cg.remove()
        resp = rpc_restore(r, img, rst_sibling=True,
                           manage_cgroups_mode=rpc.enum_value("criu_cg_mode", "STRICT"),
                           cg_root=[{"ctrl": "pids", "path": cg.rel("pids", "q")}])
        expect_ok(r, resp, "restore", img / "restore.log")
        adopt(r, resp.restore.pid)
        assert task_cgroup(r.pid, "pids") == cg.rel("pids", "q")
        assert cg.read("pids", "q", "pids.max") == "66"
        assert task_cgroup(r.pid, fz) == cg.rel(fz, "fz")
        r.finish("fail")    # its pids cgroup is another one


# --------------------------------------------------------- user namespace

@pytest.mark.parametrize("cgroups", ["made", "closed"])
def test_userns_root(cg: Cgroups, cgroups: str) -> None:
    """A root in a user namespace of its own (root inside is 200000
    outside) in cgroups of its own: they are made again (soft), or they
    are there (none) with a cgroup.procs only criu, outside, may write:
    the root, whose namespace does not map their owner, can't move itself.
    Either way the root is back in them with its ids."""
    ctrls = [c for c in ("pids", "cpu") if c in V1] + (["unified"] if "unified" in HIER else [])
    if not ctrls:
        pytest.skip("no cgroup hierarchy to use here")
    args = []
    for c in ctrls:
        cg.make(c, "u")
        args.append(f"join:{cg.path(c, 'u')}")
    with zdtm.Run(PROG, "userns", args=args + ["userns:200000"]) as r:
        # the task is 200000 on the host: its files must be open to it
        session = r.dir.parent
        mode = os.stat(session).st_mode & 0o7777
        os.chmod(r.dir, 0o777)
        r.log.touch()
        os.chmod(r.log, 0o666)
        try:
            os.chmod(session, mode | 0o111)
            run_userns_root(r, cg, ctrls, cgroups)
        finally:
            os.chmod(session, mode)


def run_userns_root(r: zdtm.Run, cg: Cgroups, ctrls: list[str], cgroups: str) -> None:
    """Its round trip, its files open to it."""
    r.start()
    img = r.imgdir("img")
    r.dump_ok(img)
    opts = []
    if cgroups == "made":
        cg.remove()
    else:
        for c in ctrls:
            os.chmod(f"{cg.path(c, 'u')}/cgroup.procs", 0)
        opts = ["--manage-cgroups=none"]
    r.restore_ok(img, opts)
    assert "Uid:\t200000" in Path(f"/proc/{r.pid}/status").read_text()
    for c in ctrls:
        assert task_cgroup(r.pid, c) == cg.rel(c, "u"), c
    r.finish()
