"""runc (Debian's 1.1.5) with a terminal: a busybox container with
"terminal": true, whose console pty master runc hands to a --console-socket
(ours). The pty's slave is the container's terminal, its master outside the
container: runc checkpoints with orphan_pts_master, and on restore criu
makes a new pair at the same index on the container's devpts and sends the
new master in the orphan-pts-master notification; runc passes it to the
--console-socket given to `runc restore`. The shell in the container reads
commands from that new master: test_runc_console.
"""
from __future__ import annotations

import array
import os
import socket
import threading
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

import zdtm
from test_rpc_runc import Container, checkpoint, running

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

SHELL = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done & exec /bin/sh"


class ConsoleSocket:
    """A --console-socket: takes the one master runc sends (SCM_RIGHTS)."""

    def __init__(self, path: Path):
        self.path = path
        self.sk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sk.bind(str(path))
        self.sk.listen(1)
        self.master: Optional[int] = None
        self.thread = threading.Thread(target=self._take, daemon=True)
        self.thread.start()

    def _take(self) -> None:
        self.sk.settimeout(60)
        try:
            conn, _ = self.sk.accept()
        except OSError:
            return
        with conn:
            fds = array.array("i")
            _, anc, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(fds.itemsize))
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[:fds.itemsize])
            if fds:
                self.master = fds[0]

    def wait(self) -> int:
        self.thread.join(60)
        assert self.master is not None, f"nothing came to the console socket {self.path}"
        return self.master

    def close(self) -> None:
        self.sk.close()
        if self.master is not None:
            os.close(self.master)


class ConsoleContainer(Container):
    TERMINAL = True
    SCRIPT = SHELL

    def run_args(self) -> list[str]:
        self.console = ConsoleSocket(self.base / "console1.sock")
        return ["--console-socket", str(self.console.path)]

    def say(self, master: int, cmd: str, result: str) -> str:
        """Types @cmd on the terminal; what the shell wrote into @result."""
        out = self.bundle / "rootfs" / "tmp" / result
        os.write(master, (cmd + f" > /tmp/{result}\n").encode())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                text = out.read_text()
                if text.endswith("\n"):
                    return text.strip()
            except OSError:
                pass
            time.sleep(0.05)
        return ""


@pytest.fixture
def console(tmp_path: Path) -> Iterator[ConsoleContainer]:
    c = ConsoleContainer(tmp_path)
    try:
        yield from running(c)
    finally:
        if hasattr(c, "console"):
            c.console.close()


def test_runc_console(console: ConsoleContainer) -> None:
    """The terminal works, checkpoint, restore -d with a new console
    socket: the new master drives the same shell (same pty path), and the
    counter went on."""
    c = console
    master = c.console.wait()
    tty = c.say(master, "tty", "tty1")
    assert tty.startswith("/dev/pts/"), tty
    p = checkpoint(c)
    assert p.returncode == 0, p.stderr + (c.base / "work" / "dump.log").read_text()[-3000:]
    before = c.count()
    sock2 = ConsoleSocket(c.base / "console2.sock")
    try:
        p = c.runc("restore", "-d", "--console-socket", str(sock2.path), "--image-path",
                   str(c.base / "img"), "--work-path", str(c.base / "work"), c.name,
                   check=False)
        log = c.base / "work" / "restore.log"
        assert p.returncode == 0, p.stderr + (log.read_text()[-3000:] if log.exists() else "")
        new = sock2.wait()
        assert c.status() == "running" and c.counting()
        assert c.count() > before, "the counter restarted"
        assert c.say(new, "tty", "tty2") == tty, "the terminal's path changed"
    finally:
        sock2.close()
