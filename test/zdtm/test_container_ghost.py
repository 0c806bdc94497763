"""Deleted files ("ghosts") inside a container: a program of the container
(static/file_ghost_places, run by the ns flavour's NsRun: its own pid,
mount, network, ipc, uts and cgroup namespaces, pivot_root into the
rootfs) holds a deleted file open and maps another in three places of its
mount namespace, the /dev/shm tmpfs, its root filesystem and a volume (a
host directory bound in, --external), and its cwd is a removed directory.
criu dumps the container and restores it with --root (the same directory
as at dump): the ghosts are made again in the restored mount tree, at
their paths, and nothing is left in those directories; the program checks
each one itself (contents, mode, offset, "(deleted)" names).

A restore that fails, while a ghost is filled or once the ghosts are
made, leaves no file behind, the images as they were, and a restore after
it works."""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

import container as ct
import nsflavour
import zdtm

PROG = "file_ghost_places"
VOLUME = "/mnt/vol"


@pytest.fixture(autouse=True)
def _ready() -> None:
    why = ct.available()
    if why:
        pytest.skip(why)
    zdtm.need_criu()
    why = nsflavour.probe()
    if why:
        pytest.skip(why)


class GhostRun(nsflavour.NsRun):
    """file_ghost_places in a container with a volume, given its three
    directories: the tmpfs, its run directory on the rootfs, the volume."""

    def __enter__(self) -> "GhostRun":
        return self

    def __init__(self, volume: Path):
        super().__init__(zdtm.load_desc(PROG), zdtm.GAP)
        self.volume = volume
        self.ctr_opts = ["-v", f"{volume}:{VOLUME}"]
        self.args = ["/dev/shm", self.inside(self.dir), VOLUME]

    def dump_here(self) -> Path:
        img = self.imgdir("img")
        self.dump_ok(img, ["--external", f"mnt[{VOLUME}]:vol"])
        self.kill()                     # nothing of the old container may stay
        time.sleep(zdtm.GAP)
        return img

    def restore_opts(self) -> list[str]:
        return ["--external", f"mnt[vol]:{self.volume}"]

    def left(self) -> list[str]:
        """Names in the rootfs run directory and the volume that are the
        program's deleted files or criu's (the program's own check, seen
        from the host while no task runs)."""
        out = []
        for d in (self.dir, self.volume):
            out += [f"{d}/{n}" for n in os.listdir(d)
                    if n.startswith(f"{PROG}.fd.") or n.startswith(f"{PROG}.map.") or
                    n == f"{PROG}.cwd" or n.startswith(".criu")]
        return out


@pytest.fixture
def run(tmp_path: Path) -> Iterator[GhostRun]:
    volume = tmp_path / "vol"
    volume.mkdir()
    with GhostRun(volume) as r:
        yield r
        if r.ctr.state.exists():
            r.ctr.delete(pid=r.init)


def image_sums(img: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in img.iterdir()
            if p.is_file() and p.suffix == ".img"}


def test_ghosts_round_trip(run: GhostRun) -> None:
    """Dumped, the container gone, restored with --root: every ghost is back
    in its place, deleted, with its contents; no name is left."""
    run.start()
    snap = run.snapshot()
    img = run.dump_here()
    assert not run.left(), run.left()
    run.restore_ok(img, run.restore_opts())
    assert not run.left(), f"the restore left {run.left()}"
    run.check_running("after restore into a new container", snap)
    run.finish()


@pytest.mark.parametrize("how", ["killed", "later"])
def test_failed_restore_leaves_no_ghost(run: GhostRun, how: str) -> None:
    """killed: the restored root dies while it fills the first ghost
    (CRIU_FAULT=ghost-filled); later: the restore fails after every ghost
    was made (the program's binary is gone from the root). Either way no
    task, no file of the ghosts' left in the rootfs or the volume, the
    images unchanged; with the binary back, the restore works."""
    run.start()
    snap = run.snapshot()
    img = run.dump_here()
    sums = image_sums(img)
    binary = run.root / "zdtm" / PROG
    hidden = binary.with_name(PROG + ".away")
    env = None
    if how == "killed":
        env = dict(os.environ, CRIU_FAULT="ghost-filled")
    else:
        binary.rename(hidden)
    try:
        res, _ = run.restore(img, ["--root", str(run.root)] + run.restore_opts(), env)
    finally:
        if how == "later":
            hidden.rename(binary)
    if res.returncode == 0:
        run.fail("the restore worked though it was made to fail", res)
    if how == "later":
        log = (img / "restore.log").read_text(errors="replace")
        errs = zdtm.error_lines(res.stderr)
        assert len(errs) == 1 and f"/zdtm/{PROG}" in errs[0], res.describe()
        assert "made the deleted files" in log, "the restore failed before the ghosts"
    zdtm.reap_leftovers()
    assert not ct.tasks_in_pidns(run.ctr.ns["pid"]) if run.ctr.ns else True
    assert not run.left(), f"the failed restore left {run.left()}"
    assert image_sums(img) == sums, "the failed restore changed the images"
    run.restore_ok(img, run.restore_opts())
    run.check_running("after the restore that followed the failed one", snap)
    run.finish()


# A shell as the container's init (busybox: no mapping, but an fd and a cwd):
# a deleted file held open on the /dev/shm tmpfs and one on the rootfs (/tmp),
# a removed cwd on the tmpfs, then sleep holds them all.
HOLD = ("mkdir /dev/shm/gone && cd /dev/shm/gone && rmdir /dev/shm/gone && "
        "exec 3<>/dev/shm/held 4<>/tmp/held && echo on-tmpfs >&3 && echo on-root >&4 && "
        "chmod 640 /dev/shm/held && rm /dev/shm/held /tmp/held && "
        "touch /dev/shm/ready && exec sleep 100000")


def held(pid: int) -> dict[str, tuple[str, int, int, str]]:
    """What the task holds: fd 3, fd 4 and its cwd, each as (link, owner as
    the host sees it, mode, contents)."""
    out = {}
    for name in ("fd/3", "fd/4", "cwd"):
        p = f"/proc/{pid}/{name}"
        st = os.stat(p)
        data = "" if name == "cwd" else Path(p).read_text()
        out[name] = (os.readlink(p), st.st_uid, st.st_mode & 0o7777, data)
    return out


def test_ghosts_userns(tmp_path: Path) -> None:
    """In a container with a user namespace of its own (ctr --userns: root
    inside is 100000 outside): the deleted files are made again by the
    restored root inside that namespace, owned by the ids the host saw
    (named through its maps), with their mode and contents; the cwd is
    removed again."""
    base = Path(tempfile.mkdtemp(prefix="zdtm-ghost.", dir="/tmp"))
    os.chmod(base, 0o711)           # the mapped root must reach its rootfs
    c = ct.Container(tmp_path, ct.copy_rootfs(base / "root"), f"zg{os.getpid()}",
                     ["--userns"], ["/bin/sh", "-c", HOLD])
    try:
        c.start()
        deadline = time.monotonic() + 10
        while not c.path("/dev/shm/ready").exists():
            assert time.monotonic() < deadline and c.alive(), "the container did not start"
            time.sleep(0.02)
        before = held(c.pid)
        assert before["fd/3"] == ("/dev/shm/held (deleted)", 100000, 0o640, "on-tmpfs\n")
        img = tmp_path / "img"
        img.mkdir()
        res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img), "-o",
                                             "dump.log", "-v4", "--external", "mnt[]"],
                          img / "dump.log")
        assert res.returncode == 0, res.describe()
        assert not ct.reap_until_gone(c.tasks()), "the dumped container still runs"
        c.delete(keep_state=True)
        pidfile = img / "restore.pid"
        res = ct.run_criu(tmp_path, "restore", ["restore", "-D", str(img), "-d", "--root",
                                                str(c.root), "--pidfile", str(pidfile),
                                                "-o", "restore.log", "-v4"],
                          img / "restore.log")
        assert res.returncode == 0, res.describe()
        c.pid = int(pidfile.read_text())
        c.read_ns()
        assert c.ns["user"] != ct.ns_id(os.getpid(), "user")
        assert held(c.pid) == before
        assert not [n for n in os.listdir(c.root / "tmp") if "held" in n or ".criu" in n]
        c.delete(pid=c.pid)
    finally:
        if c.state.exists():
            c.ctr("delete", "--state", str(c.state), c.name)
        ct.kill_tree(c.tasks())
        ct.remove_tree(base)


def test_link_remap_on_tmpfs() -> None:
    """--link-remap inside a container, on its /dev/shm tmpfs (whose files
    the mount part saves): file_ghost_linked, its cwd there, restored with
    --root; the link the dump made is in the restored tmpfs, then gone."""
    with nsflavour.NsRun(zdtm.load_desc("file_ghost_linked"), zdtm.GAP) as r:
        r.ctr_opts = ["--cwd", "/dev/shm"]
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, ["--link-remap"])
        r.kill()
        time.sleep(zdtm.GAP)
        r.restore_ok(img)
        r.check_running("after restore into a new container", snap)
        r.finish()
