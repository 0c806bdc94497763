"""Unix sockets that need a setup from outside.

Failed restores of bound unix sockets (static/sk_unix_dgram): criu fails
cleanly (one Error line) and leaves no socket file it made behind, whether
the failure comes while it binds the tree's sockets (a regular file where
one must be bound) or later (a file the task had open is gone). The images
then still restore, and the task passes its own check.

A datagram socket connected to a server outside the tree
(static/sk_unix_ext): --ext-unix-sk and --external unix[INO]."""
from __future__ import annotations

import os
import socket
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


# ---------------------------------------------- a peer outside the tree

def server(r: zdtm.Run) -> socket.socket:
    """The server outside the tree: a datagram socket bound in r's work dir."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(r.dir / "logger"))
    s.settimeout(5)
    return s


def expect_datagram(r: zdtm.Run, s: socket.socket, want: bytes) -> None:
    try:
        got = s.recv(64)
    except OSError as e:
        r.fail(f"the server outside got nothing ({e}), not {want!r}")
    if got != want:
        r.fail(f"the server outside got {got!r}, not {want!r}")


@pytest.mark.parametrize("how", ["ext-unix-sk", "ext-unix-sk=INO", "external"])
def test_external_peer(how):
    """Dumped with --ext-unix-sk (every socket, or by the inode), or
    --external unix[INO]: restored, the socket is connected to the server
    again and its datagram arrives; without the option the dump is refused
    and names it."""
    with zdtm.Run("sk_unix_ext", how) as r, server(r) as s:
        r.args = [str(r.dir / "logger")]
        r.start()
        expect_datagram(r, s, b"before")
        snap = r.snapshot()
        ino = os.fstat(s.fileno()).st_ino
        res = r.dump(r.imgdir("refused"), leave_running=True)
        check_clean_error(r, res, "dump without --ext-unix-sk", ("--ext-unix-sk",))
        r.check_running("after the refused dump", snap)
        opt = {"ext-unix-sk": ["--ext-unix-sk"], "ext-unix-sk=INO": [f"--ext-unix-sk={ino}"],
               "external": ["--external", f"unix[{ino}]"]}[how]
        img = r.imgdir("img")
        r.dump_ok(img, opt)
        r.restore_ok(img, opt)
        r.check_running("after restore", snap)
        r.finish()
        expect_datagram(r, s, b"after")


def test_external_peer_gone():
    """The server is gone at restore: one line naming its path, nothing left."""
    with zdtm.Run("sk_unix_ext", "gone") as r:
        s = server(r)
        r.args = [str(r.dir / "logger")]
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, ["--ext-unix-sk"])
        s.close()
        res, _ = r.restore(img, ["--ext-unix-sk"])
        check_clean_error(r, res, "restore without the server", ("logger",))
        check_nothing_left(r, "restore without the server", res)
        (r.dir / "logger").unlink()
        with server(r) as s2:
            r.restore_ok(img, ["--ext-unix-sk"])
            r.finish()
            expect_datagram(r, s2, b"after")
