"""Terminals criu refuses to dump (static/tty_refused): data the master
wrote that the slave has not read (what the slave wrote is saved: tty_pair), a slave whose master is outside the tree (without
--inherit-fd), the system console. criu must fail cleanly (one stderr line
with "Error" that names the task and the reason) and the task must go on
untouched, its queued data still there (test_errors.py's contract).

A shell job on a terminal of its own (static/tty_shell_job), in a mount
namespace with a devpts of the test's: dumped with --shell-job and
restored with its terminal given back by --inherit-fd (test_shell_job)."""
from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import time

import pytest

import zdtm
from test_errors import check_clean_error, check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/tty_refused -> words one of which the line must hold
    "queued-slave": ("queued unread",),
    "outside": ("outside the tree",),
    "console": ("system console",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_tty(what: str) -> None:
    with zdtm.Run("tty_refused", f"refused-{what}", args=[what]) as r:
        check_refused_dump(r, f"a task holding {what}", REFUSED[what])


class Devpts:
    """A mount namespace with a devpts of its own at /dev/pts (the host has
    none), held by a sleeping helper; the test program and criu enter it."""

    def __init__(self) -> None:
        self.helper = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             "mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts && echo ok && "
             "exec sleep 600"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.helper.stdout is not None
        if self.helper.stdout.readline().strip() != b"ok":
            self.close()
            pytest.skip("can't mount a devpts of our own in a mount namespace")
        self.prefix = ["nsenter", f"--mount=/proc/{self.helper.pid}/ns/mnt"]

    def pty(self) -> tuple[int, int, str]:
        """A new pair: master, slave (ours), the slave's path in the namespace."""
        master = os.open(f"/proc/{self.helper.pid}/root/dev/pts/ptmx", os.O_RDWR | os.O_NOCTTY)
        fcntl.ioctl(master, TIOCSPTLCK, struct.pack("i", 0))
        index = struct.unpack("I", fcntl.ioctl(master, TIOCGPTN, b"\0" * 4))[0]
        slave = fcntl.ioctl(master, TIOCGPTPEER, os.O_RDWR | os.O_NOCTTY)
        os.set_inheritable(slave, True)
        return master, slave, f"/dev/pts/{index}"

    def close(self) -> None:
        self.helper.kill()
        self.helper.wait()


# <asm-generic/ioctls.h>: Python's termios lacks them
TIOCGPTN = 0x80045430
TIOCSPTLCK = 0x40045431
TIOCGPTPEER = 0x5441    # linux 4.13


def read_until(fd: int, want: bytes, timeout: float = 10) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while want not in got and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            got += os.read(fd, 256)
    return got


@pytest.mark.parametrize("how", ["inherit-fd", "stdin"])
def test_shell_job(how: str) -> None:
    """A job on a terminal whose master is outside the tree: dumped with
    --shell-job, restored on another terminal, handed over by --inherit-fd
    fd[N]:tty[RDEV:DEV] or as criu's stdin (the old one stays open:
    reopening it by its path would be wrong); the line typed on the new
    terminal after the restore reaches the job and its answer comes back
    there. Without a terminal the restore is refused first, with one line,
    leaving nothing."""
    ns = Devpts()
    fds: list[int] = []
    try:
        master, slave, path = ns.pty()
        fds += [master, slave]
        st = os.fstat(slave)
        key = f"tty[{st.st_rdev:x}:{st.st_dev:x}]"
        with zdtm.Run("tty_shell_job", f"shell-job-{how}", session_leader=False,
                      args=[path]) as r:
            r.start_prefix = r.criu_prefix = ns.prefix
            r.start()
            img = r.imgdir("img")
            r.dump_ok(img, ["--shell-job"])
            # no terminal for it (criu's stdin is not one): refused, nothing left
            res, _ = r.restore(img, ["--shell-job"])
            check_clean_error(r, res, "restore without a terminal", ("--inherit-fd",))
            assert not zdtm.pid_exists(r.pid), "the failed restore left the task"
            master2, slave2, path2 = ns.pty()
            fds += [master2, slave2]
            opts = ["--shell-job"]
            if how == "stdin":
                r.criu_stdin = slave2
            else:
                r.criu_fds = (slave2,)
                opts += ["--inherit-fd", f"fd[{slave2}]:{key}"]
            r.restore_ok(img, opts)
            os.write(master2, f"{path2}\n".encode())
            r.finish()
            assert b"pong" in read_until(master2, b"pong"), "the job's answer did not come"
    finally:
        for fd in fds:
            os.close(fd)
        ns.close()
