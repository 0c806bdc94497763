"""Mapped files that are copies (Documentation/design.md, section 8): a
container image unpacked on another host holds the same binaries and
libraries with other mtimes and inodes. The program runs from a copy of
its binary in the test's directory; after the dump that file is replaced:
by another copy of the same bytes (another inode and mtime: restored, the
log says it was taken for a copy), by a file of another build-id (a
rebuild: refused, naming the file), by a file without a build-id of the
same size (refused: nothing tells it from a change).
Run: python3 -m pytest -q test/zdtm/test_filecopy.py"""
from __future__ import annotations

import os
import shutil
import struct
import time
from pathlib import Path

import zdtm
from test_errors import check_clean_error

PROG = "mem_anon"
NOTE = struct.pack("<III", 4, 20, 3) + b"GNU\0"    # a 20-byte NT_GNU_BUILD_ID


class CopyRun(zdtm.Run):
    """A Run whose program is a copy of the built one, in its directory."""

    def binary(self) -> Path:
        exe = self.dir / PROG
        if not exe.exists():
            shutil.copy2(super().binary(), exe)
        return exe


def replace(path: Path, data: bytes) -> None:
    """path becomes a new file (another inode, a later mtime) holding data."""
    tmp = path.with_suffix(".new")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o755)
    t = time.time() + 100
    os.utime(tmp, (t, t))
    os.replace(tmp, path)


def build_id_at(data: bytes) -> int:
    i = data.find(NOTE)
    assert i > 0, "the test program has no 20-byte GNU build-id"
    return i + len(NOTE)


def run_with(tag: str, change: str) -> None:
    zdtm.need_criu()
    with CopyRun(PROG, tag) as r:
        r.start()
        exe = r.binary()
        orig = exe.read_bytes()
        img = r.imgdir("img")
        r.dump_ok(img)
        data = bytearray(orig)
        if change == "rebuilt":
            data[build_id_at(orig)] ^= 0xff
        elif change == "no-build-id":
            data[build_id_at(orig) - 4:build_id_at(orig) - 1] = b"XYZ"
        replace(exe, bytes(data))
        if change != "copy":
            res, _ = r.restore(img)
            check_clean_error(r, res, f"restore with a {change} binary", ("changed",),
                              r.pid)
            if str(exe) not in zdtm.error_lines(res.stderr)[0]:
                r.fail(f"the Error line does not name {exe}", res)
            if zdtm.pid_exists(r.pid):
                r.fail("the refused restore left the task behind", res)
            replace(exe, orig)
        r.restore_ok(img)
        log = (img / "restore.log").read_text(errors="replace")
        if "the same size and build-id: a copy" not in log:
            r.fail("the restore log does not say the binary was taken for a copy")
        r.finish()


def test_copy_restores() -> None:
    """Another inode and mtime, the same bytes: restored."""
    run_with("copy", "copy")


def test_rebuilt_refused() -> None:
    """Another build-id, the same size: refused by name; the same bytes
    back (another copy) restore."""
    run_with("rebuilt", "rebuilt")


def test_no_build_id_refused() -> None:
    """The build-id note gone (its name changed), the same size: refused."""
    run_with("nobid", "no-build-id")
