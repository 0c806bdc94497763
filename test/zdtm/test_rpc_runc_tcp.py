"""runc (Debian's 1.1.5) and an established TCP connection: a busybox
container whose counter sends each number over a TCP connection on the
container's loopback to a listener in the same container, which writes what
it receives to /tmp/got.

`runc checkpoint` without --tcp-established is refused by criu and the
container runs on (test_runc_tcp_refused). With --tcp-established on both
sides the connection is checkpointed through TCP_REPAIR and restored: the
numbers received go on from where they were, none lost and none twice
(test_runc_tcp_established).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

import zdtm
from test_rpc_runc import Container, checkpoint, running

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

# the listener first (its stdin never ends: busybox nc ends the connection at
# its stdin's end), then the counter piped into a client connected to it
SENDER = ("sleep 1000000 | nc -l -p 5000 > /tmp/got & sleep 0.5; "
          "i=0; while true; do i=$((i+1)); echo $i; echo $i > /tmp/count; sleep 0.05; done "
          "| nc 127.0.0.1 5000")


class TcpContainer(Container):
    SCRIPT = SENDER
    TOOLS = ("nc",)

    def received(self) -> list[str]:
        try:
            return (self.bundle / "rootfs" / "tmp" / "got").read_text().split("\n")
        except OSError:
            return []

    def check_stream(self, what: str) -> int:
        """The numbers received are 1, 2, 3... with none missing or twice;
        returns the last whole one."""
        got = self.received()
        whole = got[:-1]        # the last may be cut (a number being written)
        assert whole, f"{what}: nothing received over the connection"
        want = [str(i) for i in range(1, len(whole) + 1)]
        if whole != want:
            bad = next(i for i, (a, b) in enumerate(zip(whole, want)) if a != b)
            raise AssertionError(f"{what}: line {bad + 1} is {whole[bad]!r}, not {want[bad]!r}")
        return len(whole)


@pytest.fixture
def tcp_container(tmp_path: Path) -> Iterator[TcpContainer]:
    yield from running(TcpContainer(tmp_path))


def growing(c: TcpContainer, after: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if c.check_stream("while it runs") > after:
            return True
        time.sleep(0.05)
    return False


def test_runc_tcp_refused(tcp_container: TcpContainer) -> None:
    """Without --tcp-established criu refuses the connection by name, and the
    container (and its connection) runs on."""
    c = tcp_container
    assert growing(c, 0), "the connection carries nothing"
    p = checkpoint(c)
    assert p.returncode != 0, "checkpoint of an established connection without the option"
    log = (c.base / "work" / "dump.log")
    text = p.stderr + (log.read_text() if log.exists() else "")
    assert "tcp-established" in text, text[-2000:]
    assert c.status() == "running" and c.counting(), "the refused checkpoint stopped it"
    assert growing(c, c.check_stream("after the refusal")), "the connection stopped"


def test_runc_tcp_established(tcp_container: TcpContainer) -> None:
    """checkpoint --tcp-established, restore -d --tcp-established: the
    stream goes on, each number once."""
    c = tcp_container
    assert growing(c, 5), "the connection carries nothing"
    p = checkpoint(c, "--tcp-established")
    assert p.returncode == 0, p.stderr
    assert c.status() in ("stopped", "gone")
    before = c.check_stream("at the checkpoint")
    c.runc("restore", "-d", "--tcp-established", "--image-path", str(c.base / "img"),
           "--work-path", str(c.base / "work"), c.name)
    assert c.status() == "running" and c.counting()
    assert growing(c, before + 5), "the restored connection carries nothing"
    c.check_stream("after the restore")
