"""Failed restores of bound unix sockets (static/sk_unix_dgram): criu fails
cleanly (one Error line) and leaves no socket file it made behind, whether
the failure comes while it binds the tree's sockets (a regular file where
one must be bound) or later (a file the task had open is gone). The images
then still restore, and the task passes its own check."""
from __future__ import annotations

from pathlib import Path

import pytest

import zdtm
from test_errors import check_clean_error, check_nothing_left

pytestmark = pytest.mark.usefixtures("need_criu")

# sk_unix_dgram's sockets, bound in this order
SOCKETS = ["dg.r", "dg.s", "dg.x", "dg.y", "st.b"]


def dumped(r: zdtm.Run) -> Path:
    """Dump the program; its socket files, dead now, go, as on another host."""
    r.start()
    img = r.imgdir("img")
    r.dump_ok(img)
    for name in SOCKETS:
        (r.dir / name).unlink()
    return img


def check_no_sockets(r: zdtm.Run, what: str, res: zdtm.CriuResult,
                     names: list[str]) -> None:
    left = [n for n in names if (r.dir / n).exists() or (r.dir / n).is_symlink()]
    if left:
        r.fail(f"{what}: socket files left behind: {left}", res)


def restore_again(r: zdtm.Run, img: Path) -> None:
    r.restore_ok(img)
    r.check_running("after the restore that works")
    r.finish()


def test_bind_fails_midway():
    """A regular file stands where the fourth socket is bound: the restore
    names it, and the three bound before are gone again."""
    with zdtm.Run("sk_unix_dgram", "bind-fails") as r:
        img = dumped(r)
        (r.dir / "dg.y").write_text("not a socket\n")
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore with a file at dg.y", ("dg.y",))
        check_nothing_left(r, "restore with a file at dg.y", res)
        check_no_sockets(r, "restore with a file at dg.y", res, ["dg.r", "dg.s", "dg.x"])
        if (r.dir / "dg.y").read_text() != "not a socket\n":
            r.fail("the file at dg.y was changed", res)
        (r.dir / "dg.y").unlink()
        restore_again(r, img)


def test_later_failure():
    """Every socket is bound, then the task can't reopen its log (gone):
    the socket files criu made go with the failed restore."""
    with zdtm.Run("sk_unix_dgram", "later-fails") as r:
        img = dumped(r)
        log = r.dir / "sk_unix_dgram.log"
        saved = log.read_bytes()
        log.unlink()
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore without the task's log")
        check_nothing_left(r, "restore without the task's log", res)
        check_no_sockets(r, "restore without the task's log", res, SOCKETS)
        log.write_bytes(saved)
        restore_again(r, img)
