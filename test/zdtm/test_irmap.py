"""The inode map (Documentation/irmap.md): inotify watches whose inodes
the file handles fdinfo shows can't reopen, found by walking directories.

- On overlayfs (the root of most containers), whose handles don't open
  without nfs_export: static/inotify_watches works in a directory of an
  overlay the test mounts in a mount namespace of its own (the program and
  criu run there); the dump finds the watches by the irmap and the restored
  watches fire with their wds.
- --force-irmap on any filesystem: the same, said by the log.
- --irmap-scan-path DIR: the irmap walks DIR first and no more when the
  watches are there.
- Bad options are refused.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import zdtm
from test_errors import check_clean_error
from test_net import tool

pytestmark = pytest.mark.usefixtures("need_criu")

PROG = "inotify_watches"
FOUND = re.compile(r"inotify fd \d+, wd (\d+): inode \d+ found at (\S+) by the irmap \(([^)]*)\)")


class Overlay:
    """A mount namespace of the test's, held by a sleeping process, with an
    overlayfs on @base/top (lower, upper and work beside it)."""

    def __init__(self, base: Path) -> None:
        for d in ("lower", "upper", "work", "top"):
            (base / d).mkdir(parents=True)
        self.top = base / "top"
        self.proc = subprocess.Popen(
            [tool("unshare") or "unshare", "-m", "--propagation", "private", "sh", "-c",
             'mount -t overlay zdtm-ov -o "lowerdir=$0/lower,upperdir=$0/upper,'
             'workdir=$0/work" "$0/top" && exec sleep 1d', str(base)],
            stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not self.mounted():
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                pytest.skip(f"overlayfs can't be mounted here: {err.strip()}")
            if time.monotonic() > deadline:
                self.close()
                raise AssertionError("the overlay was not mounted in 10 s")
            time.sleep(0.01)

    def mounted(self) -> bool:
        try:
            inside = os.stat(f"/proc/{self.proc.pid}/root{self.top}")
            return inside.st_dev != os.stat(self.top).st_dev
        except OSError:
            return False

    def enter(self) -> list[str]:
        return [tool("nsenter") or "nsenter", f"--mount=/proc/{self.proc.pid}/ns/mnt"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def found(img: Path) -> list[tuple[str, str, str]]:
    return FOUND.findall((img / "dump.log").read_text(errors="replace"))


def test_watches_on_overlayfs() -> None:
    if not tool("nsenter") or not tool("unshare"):
        pytest.skip("nsenter or unshare is not installed")
    with zdtm.Run(PROG, "irmap-overlay") as r:
        ov = Overlay(r.dir / "ov")
        try:
            r.start_prefix = r.criu_prefix = ov.enter()
            r.args = [f"in={ov.top}"]
            r.start()
            snap = r.snapshot()
            img = r.imgdir("img")
            r.dump_ok(img)
            paths = {p for _, p, why in found(img) if "does not open" in why}
            want = {f"{ov.top}/{PROG}.dir", f"{ov.top}/{PROG}.file", f"{ov.top}/{PROG}.link"}
            if paths != want:
                r.fail(f"the irmap found {sorted(paths)}, not {sorted(want)}")
            r.restore_ok(img)
            r.check("after restore", snap)
            r.finish()
        finally:
            ov.close()


def test_force_irmap() -> None:
    with zdtm.Run(PROG, "force-irmap") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--force-irmap"])
        if {why for _, _, why in found(img)} != {"--force-irmap"} or len(found(img)) != 3:
            r.fail(f"not every watch found by the irmap: {found(img)}")
        r.restore_ok(img)
        r.finish()


def test_irmap_scan_path() -> None:
    """The watches are in the program's directory: naming it, the irmap
    walks it alone."""
    with zdtm.Run(PROG, "irmap-scan-path") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--force-irmap", "--irmap-scan-path", str(r.dir)])
        log = (img / "dump.log").read_text(errors="replace")
        if len(found(img)) != 3:
            r.fail(f"not every watch found by the irmap: {found(img)}")
        if "in the --irmap-scan-path directories" not in log or "mounts' roots" in log:
            r.fail("the irmap did not walk the directory named alone")
        r.restore_ok(img)
        r.finish()


def test_irmap_scan_path_relative_refused() -> None:
    res = subprocess.run([zdtm.CRIU, "dump", "-t", "1", "-D", "/nonexistent",
                          "--irmap-scan-path", "etc"], capture_output=True, text=True)
    assert res.returncode != 0 and "not an absolute path" in res.stderr, res


def test_watch_on_deleted_file() -> None:
    """A watch on a file deleted while the task holds it open: the dump
    saves the file (a ghost) and says the watch goes on it; after the
    restore, writing through the fd fires the watch with its wd."""
    with zdtm.Run(PROG, "deleted", args=["deleted"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        if "is the deleted file" not in (img / "dump.log").read_text(errors="replace"):
            r.fail("the dump did not take the watch as one on a deleted file")
        r.restore_ok(img)
        r.check("after restore", snap)
        r.finish()


def test_watch_on_file_held_outside_refused() -> None:
    """The watched file deleted while only a process outside the tree holds
    it: the dump refuses by name (the wd, deleted) and the task runs on."""
    with zdtm.Run(PROG, "outside", args=["outside"]) as r:
        r.start()
        snap = r.snapshot()
        path = r.dir / f"{PROG}.outside"
        fd = os.open(path, os.O_RDONLY)
        try:
            path.unlink()
            img = r.imgdir("img")
            line = check_clean_error(r, r.dump(img), "dump of a watch on a file held outside",
                                     ("inotify", "deleted"), r.pid)
            if "wd" not in line:
                r.fail(f"the Error line names no wd: {line}")
            r.check_running("after the refused dump", snap)
        finally:
            os.close(fd)
        r.finish()
