"""The page server (criu/pagesrv.c, criu/image/imgout.c, Documentation/page-server.md):
`criu page-server -D DST --port 0` receives one dump's images over TCP, and
`criu dump --page-server --address A --port P` sends every image there; the
source directory keeps the logs only.

- loopback: dump to a server on 127.0.0.1, restore from its directory, the
  program passes its own check.
- ipv6: the same over ::1.
- veth: the same between two network namespaces the test makes, joined by a
  veth pair (addresses only inside them); the restore runs in the server's.
- no server listening, an address that is not numeric: one Error line, the
  task untouched.
- server killed (CRIU_FAULT in the server: at a frame in the middle, or on
  the commit): the dump fails with one Error line, the task runs on as it
  was, the destination holds no inventory.img (no checkpoint) and a restore
  from it is refused.
- the dump killed before the commit (the server removes what it wrote) and
  after it (the server keeps the complete checkpoint).
- hostile peers (garbage, names with '/' or '..', a symlink planted in the
  directory, frames out of order, a transfer cut short): the server exits
  non-zero with one Error line, writes nothing outside its directory and
  leaves nothing of its own inside.
"""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

import zdtm
from test_errors import check_clean_error
from test_net import Netns, tool

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

PROGRAM = "mem_anon"
# the frames of Documentation/page-server.md
HELLO, OPEN, DATA, CLOSE, COMMIT, DONE, ABORT = range(1, 8)
MAGIC, VERSION = 0x50475352, 1
SOURCE_KEEPS = {"dump.log", "stats-dump"}


@pytest.fixture(autouse=True)
def _need_criu() -> None:
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


class Server:
    """criu page-server -D @dst on a port the kernel picks, logging into @logdir."""

    def __init__(self, dst: Path, logdir: Path, prefix: Optional[list[str]] = None,
                 address: Optional[str] = None, fault: Optional[str] = None,
                 opts: Optional[list[str]] = None) -> None:
        logdir.mkdir(exist_ok=True)
        cmd = (prefix or []) + [zdtm.CRIU, "page-server", "-D", str(dst), "--port", "0",
                                "-W", str(logdir), "-o", "ps.log", "-v4"] + (opts or [])
        if address:
            cmd += ["--address", address]
        env = dict(os.environ)
        if fault:
            env["CRIU_FAULT"] = fault
        self.log = logdir / "ps.log"
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError(f"criu page-server printed no port ({line!r}): {err}")
        self.port = int(line)

    def wait(self, timeout: float = 60) -> tuple[int, str]:
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError(f"the page server did not exit: {err}")
        return self.proc.returncode, err

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def ps_opts(addr: str, port: int) -> list[str]:
    return ["--page-server", "--address", addr, "--port", str(port)]


def check_transfer(r: zdtm.Run, srv: Server, src: Path, dst: Path) -> None:
    rc, err = srv.wait()
    if rc != 0:
        r.fail(f"the page server exited {rc}: {err}\n{zdtm.tail(srv.log)}")
    left = set(os.listdir(src)) - SOURCE_KEEPS
    if left:
        r.fail(f"the source directory keeps images: {sorted(left)}")
    if not (dst / "inventory.img").exists() or not list(dst.glob("pages-*.img")):
        r.fail(f"the destination is not a checkpoint: {sorted(os.listdir(dst))}")


# private pages (the page store, streamed), and the raw stores made locally
# and sent at the commit: shmem (memfd), System V, tmpfs contents
@pytest.mark.parametrize("name", [PROGRAM, "memfd_shared", "sysvipc_ns", "mnt_tmpfs"])
def test_loopback(name: str) -> None:
    desc = zdtm.load_desc(name)
    with zdtm.Run(name, "pagesrv", args=desc.args, pidns=desc.pidns) as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address="127.0.0.1")
        try:
            r.dump_ok(src, desc.dump_opts + ps_opts("127.0.0.1", srv.port))
            check_transfer(r, srv, src, dst)
        finally:
            srv.stop()
        r.restore_ok(dst, desc.restore_opts)
        r.finish()


def need_tools() -> None:
    missing = [t for t in ("ip", "nsenter", "unshare") if not tool(t)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def move(src_net: Netns, dst_net: Netns, address: str, srv_opts: Optional[list[str]] = None,
         dump_opts: Optional[list[str]] = None, logs_say: tuple[str, str] = ("", "")) -> None:
    """The program started and dumped in @src_net, through a page server in
    @dst_net listening on @address, restored in @dst_net; the dump's log says
    @logs_say[0], the server's @logs_say[1]."""
    enter_src = [tool("nsenter") or "nsenter", f"--net={src_net.path}"]
    enter_dst = [tool("nsenter") or "nsenter", f"--net={dst_net.path}"]
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        r.start_prefix = r.criu_prefix = enter_src
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", prefix=enter_dst, address=address, opts=srv_opts)
        try:
            r.dump_ok(src, ps_opts(address, srv.port) + (dump_opts or []))
            check_transfer(r, srv, src, dst)
        finally:
            srv.stop()
        for log, says in zip((src / "dump.log", srv.log), logs_say):
            if says not in log.read_text():
                r.fail(f"{log.name} does not say {says!r}:\n{zdtm.tail(log)}")
        r.criu_prefix = enter_dst
        r.restore_ok(dst)
        r.finish()


def test_veth() -> None:
    """Host a (the program, the dump) and host b (the server, the restore):
    two network namespaces joined by a veth pair."""
    need_tools()
    a, b = Netns(), Netns()
    try:
        a.sh(f"ip link add psa type veth peer name psb netns {b.proc.pid} && "
             "ip addr add 10.77.0.1/24 dev psa && ip link set psa up")
        b.sh("ip addr add 10.77.0.2/24 dev psb && ip link set psb up")
        move(a, b, "10.77.0.2")
    finally:
        a.close()
        b.close()


def test_ipv6() -> None:
    """The same over ::1, in a network namespace of the test's (lo up)."""
    need_tools()
    n = Netns()
    try:
        move(n, n, "::1")
    finally:
        n.close()


def killed_server(r: zdtm.Run, fault: str, srv_opts: Optional[list[str]] = None,
                  dump_opts: Optional[list[str]] = None) -> tuple[Path, zdtm.Snapshot]:
    """r's program dumped to a server killed at @fault: one Error line, the
    task running on, no inventory.img there. The destination and the
    snapshot, for more checks."""
    r.start()
    snap = r.snapshot()
    src, dst = r.imgdir("src"), r.imgdir("dst")
    srv = Server(dst, r.dir / "pslog", address="127.0.0.1", fault=fault, opts=srv_opts)
    try:
        res = r.dump(src, ps_opts("127.0.0.1", srv.port) + (dump_opts or []))
        line = check_clean_error(r, res, f"dump to a server killed at {fault}",
                                 ("page server",))
        r.note(f"refused: {line}")
        rc, _ = srv.wait()
        if rc != -9:
            r.fail(f"the page server was to die at {fault}, it exited {rc}")
    finally:
        srv.stop()
    r.check_running(f"after the dump to a server killed at {fault}", snap)
    if fault == "pagesrv-commit" and not list(dst.glob("pages-*.img")):
        r.fail("the server died on the commit without the images: test broken")
    if (dst / "inventory.img").exists():
        r.fail(f"the destination looks complete: {sorted(os.listdir(dst))}")
    return dst, snap


@pytest.mark.parametrize("fault", ["pagesrv-frame#12", "pagesrv-commit"])
def test_server_killed(fault: str) -> None:
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        dst, snap = killed_server(r, fault)
        res, _ = r.restore(dst)
        if res.returncode == 0:
            r.fail("a restore from the half-sent checkpoint succeeded", res)
        r.check_running("after the refused restore", snap)
        r.finish()


def test_no_server() -> None:
    """Nobody listens: the dump fails at once with one Error line naming the
    page server, and the task was never touched."""
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        r.start()
        snap = r.snapshot()
        with socket.socket() as sk:     # a port that was free a moment ago
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        src = r.imgdir("src")
        res = r.dump(src, ps_opts("127.0.0.1", port))
        check_clean_error(r, res, "dump to no page server", ("connect",))
        res = r.dump(src, ["--page-server", "--address", "no.such.host", "--port", "1"])
        check_clean_error(r, res, "dump to a page server named", ("numeric",))
        res = r.criu(["restore", "-D", str(src), "--page-server", "--address", "127.0.0.1",
                      "--port", str(port)])
        check_clean_error(r, res, "restore --page-server", ("lazy",))
        r.check_running("after the dumps to no page server", snap)
        r.finish()


def test_daemon() -> None:
    """-d: the command returns once the server listens (the port printed,
    a zero byte on --status-fd, --pidfile naming the daemon), and the
    daemon takes the dump."""
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        pidfile = r.dir / "ps.pid"
        rfd, wfd = os.pipe()
        # files, not pipes: the daemon keeps stderr for its errors
        with open(r.dir / "ps.out", "w+") as out, open(r.dir / "ps.err", "w+") as err:
            try:
                p = subprocess.run([zdtm.CRIU, "page-server", "-D", str(dst), "--port",
                                    "0", "--address", "127.0.0.1", "-d", "--pidfile",
                                    str(pidfile), "--status-fd", str(wfd), "-W", str(r.dir),
                                    "-o", "ps.log", "-v4"], pass_fds=(wfd,), stdout=out,
                                   stderr=err, timeout=30)
                os.close(wfd)
                status = os.read(rfd, 16)
            finally:
                os.close(rfd)
            out.seek(0)
            port = out.read().strip()
            err.seek(0)
            if p.returncode or not port.isdigit() or status != b"\0":
                r.fail(f"page-server -d: exit {p.returncode}, stdout {port!r}, status fd "
                       f"{status!r}: {err.read()}")
        pid = int(pidfile.read_text())
        if not Path(f"/proc/{pid}").exists():
            r.fail(f"the daemon {pid} of --pidfile is not running")
        r.dump_ok(src, ps_opts("127.0.0.1", int(port)))
        wait_gone(pid)
        r.restore_ok(dst)
        r.finish()


def test_server_refuses() -> None:
    """The server can't create an image (a directory has its name): it
    says so to the dump, whose one Error line repeats it; the task runs on
    and the destination holds no checkpoint."""
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        r.start()
        snap = r.snapshot()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        (dst / "pstree.img").mkdir()
        srv = Server(dst, r.dir / "pslog", address="127.0.0.1")
        try:
            res = r.dump(src, ps_opts("127.0.0.1", srv.port))
            check_clean_error(r, res, "dump to a server that can't create pstree.img",
                              ("can't create image pstree.img",))
            rc, _ = srv.wait()
            if rc <= 0:
                r.fail(f"the page server exited {rc}")
        finally:
            srv.stop()
        if sorted(os.listdir(dst)) != ["pstree.img"]:
            r.fail(f"the server left {sorted(os.listdir(dst))}")
        r.check_running("after the refused dump", snap)
        r.finish()


def test_rpc_ps() -> None:
    """DUMP over RPC with ps {address, port}, as runc sends it: the images
    go to the page server, the restore from its directory passes."""
    from test_rpc import expect_dumped, rpc_dump
    with zdtm.Run(PROGRAM, "pagesrv-rpc") as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address="127.0.0.1")
        try:
            resp = rpc_dump(r, src, ps={"address": "127.0.0.1", "port": srv.port})
            expect_dumped(r, resp, src / "dump.log")
            check_transfer(r, srv, src, dst)
        finally:
            srv.stop()
        r.restore_ok(dst)
        r.finish()


def wait_gone(pid: int, timeout: float = 60) -> None:
    """A process that is not our child (the RPC's page server): until it is
    gone, or a zombie we (a subreaper) reap."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            try:
                if Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z":
                    return
            except (OSError, IndexError):
                return
        time.sleep(0.05)
    raise AssertionError(f"the page server {pid} did not exit")


def test_rpc_page_server() -> None:
    """The PAGE_SERVER request starts a page server into images_dir_fd and
    answers its port (ps.port 0: any) and pid; a dump to it restores."""
    import rpcclient as rpc
    from test_rpc import dir_fd, swrk
    with zdtm.Run(PROGRAM, "pagesrv-rpc") as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        fd = dir_fd(dst)
        try:
            s = swrk(r)
            try:
                resp = s.call(rpc.request("PAGE_SERVER", images_dir_fd=fd, log_level=4,
                                          log_file="ps.log",
                                          ps={"address": "127.0.0.1", "port": 0}))
            finally:
                s.wait()
        finally:
            os.close(fd)
        if not resp.success or not resp.ps.port or not resp.ps.pid:
            r.fail(f"PAGE_SERVER: {resp}")
        r.dump_ok(src, ps_opts("127.0.0.1", resp.ps.port))
        wait_gone(resp.ps.pid)
        if not (dst / "inventory.img").exists():
            r.fail(f"no checkpoint from the RPC's page server: {sorted(os.listdir(dst))}")
        r.restore_ok(dst)
        r.finish()


@pytest.mark.parametrize("point", ["memory", "written"])
def test_dump_killed(point: str) -> None:
    """The dump SIGKILLed (CRIU_FAULT) after its pages went out ("memory")
    or after the commit ("written"): before the commit the server removes
    what it wrote and exits 1; after it, it keeps the complete checkpoint
    (the dump may have let the tree go) and says so, exiting 1 too. The
    task runs on either way."""
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        r.start()
        snap = r.snapshot()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address="127.0.0.1")
        try:
            res = r.dump(src, ps_opts("127.0.0.1", srv.port),
                         env=dict(os.environ, CRIU_FAULT=point))
            if res.returncode != -9:
                r.fail(f"CRIU_FAULT={point}: the dump exited {res.returncode}", res)
            rc, err = srv.wait()
        finally:
            srv.stop()
        errs = zdtm.error_lines(err)
        words = "complete and kept" if point == "written" else "connection was lost"
        if rc <= 0 or len(errs) != 1 or words not in errs[0]:
            r.fail(f"the server: exit {rc}, expected one Error line saying {words!r}: {err}")
        left = sorted(os.listdir(dst))
        if point == "memory" and left:
            r.fail(f"the server left {left} of a transfer that was never committed")
        if point == "written" and "inventory.img" not in left:
            r.fail(f"the committed checkpoint is gone: {left}")
        r.check_running(f"after the dump was killed at {point}", snap)
        r.finish()


# ------------------------------------------------------------------ hostile peers

def frame(kind: int, nr: int = 0, payload: bytes = b"", length: Optional[int] = None) -> bytes:
    return struct.pack("<IIQ", kind, nr, len(payload) if length is None else length) + payload


GREET = frame(HELLO, 0, struct.pack("<II", MAGIC, VERSION))

HOSTILE: dict[str, tuple[bytes, str]] = {
    "garbage": (b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)), "not a criu dump"),
    "version": (frame(HELLO, 0, struct.pack("<II", MAGIC, 99)), "version"),
    "slash": (GREET + frame(OPEN, 1, b"sub/pages-1.img"), "plain name"),
    "dotdot": (GREET + frame(OPEN, 1, b".."), "plain name"),
    "escape": (GREET + frame(OPEN, 1, b"../escaped.img"), "plain name"),
    "nul": (GREET + frame(OPEN, 1, b"a.img\0b"), "plain name"),
    "long_name": (GREET + frame(OPEN, 1, b"x" * 300), "too long"),
    "huge_data": (GREET + frame(OPEN, 1, b"pages-1.img") + frame(DATA, 1, length=1 << 40),
                  "too large"),
    "not_open": (GREET + frame(DATA, 7, b"abc"), "not open"),
    "twice": (GREET + frame(OPEN, 1, b"a.img") + frame(OPEN, 1, b"b.img"), "twice"),
    "unknown": (GREET + frame(99, 0), "unknown frame"),
    "no_inventory": (GREET + frame(OPEN, 1, b"a.img") + frame(CLOSE, 1) + frame(COMMIT),
                     "without inventory"),
    "done_early": (GREET + frame(DONE), "before the commit"),
    "cut_short": (GREET + frame(OPEN, 1, b"pages-1.img") + frame(DATA, 1, b"x" * 100,
                                                                  length=4096),
                  "connection was lost"),
    "eof": (GREET + frame(OPEN, 1, b"pages-1.img") + frame(DATA, 1, b"y" * 4096),
            "connection was lost"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile(case: str) -> None:
    data, words = HOSTILE[case]
    with zdtm.Run(PROGRAM, "pagesrv") as r:
        dst = r.imgdir("dst")
        victim = r.dir / "victim"
        victim.write_text("untouched")
        # planted: a link out of the directory, under a name the peer uses
        (dst / "pages-1.img").symlink_to(victim)
        (dst / "old.img").write_text("an older file of the directory's")
        before = sorted(os.listdir(r.dir))
        srv = Server(dst, r.dir / "pslog", address="127.0.0.1")
        try:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sk:
                try:
                    sk.sendall(data)
                    sk.shutdown(socket.SHUT_WR)
                    while sk.recv(4096):
                        pass
                except OSError:
                    pass    # the server may close first: that is its right
            rc, err = srv.wait()
        finally:
            srv.stop()
        errs = zdtm.error_lines(err)
        if rc <= 0 or len(errs) != 1 or words not in errs[0]:
            r.fail(f"{case}: expected exit > 0 and one Error line saying {words!r}; "
                   f"got {rc}: {err!r}")
        if victim.read_text() != "untouched":
            r.fail(f"{case}: the server wrote through the planted symlink")
        after = sorted(p for p in os.listdir(r.dir) if p != "pslog")
        if after != [p for p in before if p != "pslog"]:
            r.fail(f"{case}: the server wrote outside its directory: {after}")
        left = sorted(os.listdir(dst))
        if left not in (["old.img"], ["old.img", "pages-1.img"]):
            r.fail(f"{case}: the server left {left} in its directory")
        if (dst / "pages-1.img").exists() and not (dst / "pages-1.img").is_symlink():
            r.fail(f"{case}: the server left a file of its own: pages-1.img")
