"""File locks across a restore that can't take them as they were: a lock
another process took between the dump and the restore, and a file-lock.img
naming an fd or a task the tree does not have. The restore fails cleanly
(one Error line naming the task and the lock), leaves nothing behind and
changes no image; once the cause is gone the same images restore, and the
program finds its locks (static/file_locks_*.c)."""
from __future__ import annotations

import fcntl
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import buildpaths
import zdtm
from test_errors import check_clean_error, check_nothing_left

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")


def restore_refused(r: zdtm.Run, img: Path, what: str, words: tuple[str, ...],
                    pid: int = 0) -> None:
    """A restore from img fails cleanly (one Error line naming pid and one
    of words), leaves nothing behind and changes no image."""
    def images() -> dict[str, Any]:
        return {f: h for f, h in zdtm.hash_tree(img).items() if not f.endswith(".log")}
    before = images()
    res, _ = r.restore(img)
    check_clean_error(r, res, what, words, pid)
    check_nothing_left(r, f"the refused {what}", res)
    if images() != before:
        r.fail(f"{what}: the restore changed the images", res)


def test_lock_taken_meanwhile():
    """flock_x's exclusive lock, taken by a process outside the tree in the
    gap: the restore names the lock and fails; after the outsider lets go it
    restores, and the lock is the task's."""
    with zdtm.Run("file_locks_flock", "taken-meanwhile") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--file-locks"])
        with open(r.dir / "file_locks_flock.x", "rb") as outsider:
            fcntl.flock(outsider, fcntl.LOCK_EX | fcntl.LOCK_NB)
            restore_refused(r, img, "restore of a lock taken meanwhile",
                            ("flock write lock",), r.pid)
        r.restore_ok(img)
        r.finish()


def edit_locks(src: Path, dst: Path, change: Callable[[list[Any]], None]) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    doc = crit.read_image(dst / "file-lock.img", full_bytes=True)
    change(doc["entry"]["locks"])
    (dst / "file-lock.img").write_bytes(crit.encode_image(doc))


BAD: dict[str, tuple[Callable[[list[Any]], None], str]] = {
    # what is wrong -> (the change to the image's locks, words of the Error line)
    "fd-missing": (lambda locks: locks[0].update(fd=999), "fd 999"),
    "task-outside": (lambda locks: locks[0].update(pid=1), "not a live task"),
    "range-past-max": (lambda locks: locks[0].update(start=1 << 63), "invalid lock"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_lock_image_checked(what):
    change, words = BAD[what]
    with zdtm.Run("file_locks_posix", f"bad-image-{what}") as r:
        r.start()
        good = r.imgdir("img")
        r.dump_ok(good, ["--file-locks"])
        bad = r.dir / "bad"
        edit_locks(good, bad, change)
        restore_refused(r, bad, f"restore with a file-lock.img whose {what}", (words,))
        r.restore_ok(good)
        r.finish()
