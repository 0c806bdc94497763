"""TCP connections and the options that ask for them (static/sk_inet_conn,
static/sk_inet_peer).

--tcp-established is asked on both sides, as CRIU does: a restore of
images that hold a connection, without it, fails cleanly (one Error line
naming the connection and the option, nothing left behind) and the same
images then restore with it. Over RPC, criu_opts.tcp_established is
honoured: a dump through `criu swrk` with it restores, and the program
finds every byte of its connections. Images of connections restored with
--tcp-close come back closed (sk_inet_closed).

A connection to a peer outside the tree (sk_inet_peer), both checking every
byte of both streams across the dump and the restore: over loopback in
criu's namespace (a test_net.py "host"), and from a tree with a network
namespace of its own to the host, over a veth pair (the peer on another
"host"; the namespace's lock holds packets meanwhile)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import zdtm
from test_errors import check_clean_error, check_nothing_left
from test_net import Netns, add_veth, host, start_tree, tool, wait_gone  # noqa: F401
from test_rpc import expect_dumped, rpc_dump

pytestmark = pytest.mark.usefixtures("need_criu")

TCP = ["--tcp-established"]


def test_restore_needs_the_option():
    with zdtm.Run("sk_inet_conn", "restore-without") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, TCP)
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore of connections without --tcp-established",
                          ("--tcp-established",))
        check_nothing_left(r, "restore without --tcp-established", res)
        r.restore_ok(img, TCP)
        r.finish()


@pytest.mark.parametrize("dump", ["--tcp-close", "--tcp-established"])
def test_restore_closed(dump):
    """Dumped with --tcp-close (no repair mode: only the addresses) or
    --tcp-established, restored with --tcp-close: the connection comes back
    closed, the listener still accepts (sk_inet_closed checks it)."""
    with zdtm.Run("sk_inet_closed", f"closed{dump[5:]}") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, [dump])
        r.restore_ok(img, ["--tcp-close"])
        r.check_running("after the restore", snap)
        r.finish()


def test_rpc_dump():
    with zdtm.Run("sk_inet_conn", "rpc") as r:
        r.start()
        img = r.imgdir("img")
        expect_dumped(r, rpc_dump(r, img, tcp_established=True), img / "dump.log")
        r.restore_ok(img, TCP)
        r.finish()


# The peer: the streams are sk_inet_lib.h's pattern()
PEER = r"""
import socket, sys
K = 1024
def stream(frm, n, salt):
    return bytes((i * 31 + (i >> 8) + salt) & 0xff for i in range(frm, frm + n))
def recv_exact(c, n):
    b = bytearray()
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            sys.exit(f"EOF after {len(b)} of {n} bytes")
        b += d
    return bytes(b)
ip, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
l = socket.socket(socket.AF_INET)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((ip, port))
l.listen(1)
open(ready, "w").close()
l.settimeout(30)
c, _ = l.accept()
c.settimeout(60)
if recv_exact(c, 100 * K) != stream(0, 100 * K, 3):
    sys.exit("the first 100 KiB are not the stream")
c.sendall(stream(0, 80 * K, 4))
if recv_exact(c, 100 * K) != stream(100 * K, 100 * K, 3):
    sys.exit("the 100 KiB after the restore are not the stream")
c.sendall(stream(80 * K, 50 * K, 4))
print("peer ok")
"""


def veth_once_unshared(r: zdtm.Run, h: Netns) -> None:
    """eth0 for the tree as soon as it is in a namespace of its own (it
    connects to the peer before it is ready)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if r.pid and os.stat(f"/proc/{r.pid}/ns/net").st_ino != h.ino:
                add_veth(r, h)
                return
        except FileNotFoundError:
            pass
        time.sleep(0.01)


def start_peer(r: zdtm.Run, script: str, ip: str, port: int, prefix: list[str] = [],
               extra: list[str] = []) -> subprocess.Popen[str]:
    """The peer @script listening on @ip:@port (run under @prefix), once it
    says it is ready (10 s at most); the program's arguments name it."""
    ready = r.dir / "peer.ready"
    peer = subprocess.Popen(prefix + [sys.executable, "-c", script, ip, str(port), str(ready)] +
                            extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not ready.exists() and peer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    r.args = [ip, str(port)]
    return peer


@pytest.mark.parametrize("where", ["loopback", "veth"])
def test_peer_outside(host, where):
    ip = "127.0.0.1" if where == "loopback" else "10.55.0.1"
    with zdtm.Run("sk_inet_peer", f"peer-{where}") as r:
        peer = start_peer(r, PEER, ip, 5601, [tool("nsenter") or "nsenter",
                                              f"--net={host.path}"])
        try:
            t = threading.Thread(target=veth_once_unshared, args=(r, host))
            if where == "veth":
                t.start()
            start_tree(r, host, own_ns=where == "veth")
            if where == "veth":
                t.join()
            img = r.imgdir("img")
            r.dump_ok(img, TCP)
            opts = TCP + (["--external", "veth[eth0]:vh0@br0"] if where == "veth" else [])
            if where == "veth":
                wait_gone(host, "vh0")
            r.restore_ok(img, opts)
            r.finish()
            out, err = peer.communicate(timeout=30)
            assert peer.returncode == 0 and out.strip() == "peer ok", \
                f"the peer outside: {out}{err}"
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()


def inflight_port(r: zdtm.Run) -> int:
    return int((r.dir / "port").read_text())


def test_listener_queue_refused() -> None:
    """A listener with a connection queued and not accepted: refused by
    name, with the way out (--skip-in-flight); the task runs on."""
    with zdtm.Run("sk_inet_inflight", "inflight-refused") as r:
        r.start()
        snap = r.snapshot()
        c = socket.create_connection(("127.0.0.1", inflight_port(r)), timeout=5)
        try:
            line = check_clean_error(r, r.dump(r.imgdir("img")), "dump of a listener's queue",
                                     ("listening", "--skip-in-flight"), r.pid)
            if "1 connection queued" not in line:
                r.fail(f"the Error line does not count the queued connection: {line}")
            r.check_running("after the refused dump", snap)
            # still queued: the one the task accepts
            c.sendall(b"after")
            r.finish()
        finally:
            c.close()


def test_skip_in_flight() -> None:
    """--skip-in-flight: the listener is saved without the connection
    queued (a warning says so); after the restore it accepts a new one,
    and the old one's peer got a reset."""
    with zdtm.Run("sk_inet_inflight", "inflight") as r:
        r.start()
        c = socket.create_connection(("127.0.0.1", inflight_port(r)), timeout=5)
        try:
            img = r.imgdir("img")
            r.dump_ok(img, ["--skip-in-flight"])
            log = (img / "dump.log").read_text(errors="replace")
            if "queued and not accepted: not saved (--skip-in-flight)" not in log:
                r.fail("no warning about the queued connection not saved")
            c.settimeout(5)
            try:
                got = c.recv(10)
            except ConnectionResetError:
                got = b""
            if got:
                r.fail(f"the old queued connection still gets data: {got!r}")
            r.restore_ok(img)
            d = socket.create_connection(("127.0.0.1", inflight_port(r)), timeout=5)
            d.sendall(b"after")
            r.finish()
            d.close()
        finally:
            c.close()


# The peer of sk_inet_half: A gets "a-data" and our end, B sees the task's
# end; once the restore is done (the file), B gets "b-late" and our end,
# and A must bring "a-bye" and the task's end.
HALF_PEER = r"""
import os, socket, sys, time
ip, port, ready, restored = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
l = socket.socket(socket.AF_INET)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((ip, port))
l.listen(2)
open(ready, "w").close()
l.settimeout(30)
conns = {}
for _ in range(2):
    c, _ = l.accept()
    c.settimeout(60)
    conns[c.recv(1)] = c
a, b = conns[b"A"], conns[b"B"]
a.sendall(b"a-data")
a.shutdown(socket.SHUT_WR)
if b.recv(10) != b"":
    sys.exit("B: data instead of the task's end")
deadline = time.monotonic() + 120
while not os.path.exists(restored):
    if time.monotonic() > deadline:
        sys.exit("no restore in 120 s")
    time.sleep(0.02)
b.sendall(b"b-late")
b.close()
got = b""
while True:
    d = a.recv(100)
    if not d:
        break
    got += d
if got != b"a-bye":
    sys.exit(f"A: got {got!r}, not a-bye and the end")
print("peer ok")
"""


def half_peer(r: zdtm.Run, port: int, ip: str = "127.0.0.1",
              prefix: list[str] = []) -> subprocess.Popen[str]:
    return start_peer(r, HALF_PEER, ip, port, prefix, [str(r.dir / "restored")])


@pytest.mark.parametrize("where", ["loopback", "veth"])
def test_half_closed(host, where):
    """A connection the peer closed (CLOSE_WAIT, its data and FIN unread)
    and one the task closed (FIN_WAIT2): dumped and restored with
    --tcp-established, each FIN made again; both ends check every byte and
    each end of stream after the restore. Over loopback in criu's
    namespace, and from a tree with a network namespace of its own (locked
    while it is down; the peer's FIN is made in it) over a veth pair."""
    with zdtm.Run("sk_inet_half", f"half-{where}") as r:
        ip = "127.0.0.1" if where == "loopback" else "10.55.0.1"
        peer = half_peer(r, 5603, ip, [tool("nsenter") or "nsenter", f"--net={host.path}"])
        try:
            t = threading.Thread(target=veth_once_unshared, args=(r, host))
            if where == "veth":
                t.start()
            start_tree(r, host, own_ns=where == "veth")
            if where == "veth":
                t.join()
            img = r.imgdir("img")
            r.dump_ok(img, TCP)
            if where == "veth":
                wait_gone(host, "vh0")
            r.restore_ok(img, TCP + (["--external", "veth[eth0]:vh0@br0"]
                                     if where == "veth" else []))
            (r.dir / "restored").touch()
            r.finish()
            out, err = peer.communicate(timeout=60)
            if peer.returncode != 0 or out.strip() != "peer ok":
                r.fail(f"the peer: {out}{err}")
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()


def test_half_closed_needs_the_option() -> None:
    """Without --tcp-established a half-closed connection is refused by
    name and state; the task runs on."""
    with zdtm.Run("sk_inet_half", "half-refused") as r:
        peer = half_peer(r, 5604)
        try:
            r.start()
            snap = r.snapshot()
            line = check_clean_error(r, r.dump(r.imgdir("img")), "dump of a half-closed "
                                     "connection", ("--tcp-established",), r.pid)
            if "CLOSE_WAIT" not in line and "FIN_WAIT2" not in line:
                r.fail(f"the Error line names no TCP state: {line}")
            r.check_running("after the refused dump", snap)
            (r.dir / "restored").touch()
            r.finish()
            peer.communicate(timeout=60)
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()
