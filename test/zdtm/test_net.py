"""Network namespaces of a tree (criu/parts/ns-net*.c, Documentation/namespaces.md),
set up from outside: what a zdtm program can't do alone (net_ns can).

Every test makes the network namespaces it needs ("hosts": a namespace held
by a sleeping process) and gives addresses only inside them; criu itself
runs in one of them (nsenter), so that "criu's namespace", where veth peers
are made again, is the test's and never the machine's.

- veth across: a veth pair between the tree's namespace and criu's, the
  outside end in a bridge; after restore the peer is made again (named by
  --external veth[...]:NAME@BRIDGE, or by the kernel), and a fresh process
  inside reaches the outside (ICMP and UDP both ways).
- macvlan on a link of criu's namespace, its lower link found by name or
  given with --external macvlan[...].
- --empty-ns net: a fresh namespace with lo up and nothing else.
- --external net[INODE]:KEY and --inherit-fd fd[N]:KEY: the tree joins the
  namespace it had, which stays locked between the dump and the restore.
- The network lock: a peer pinging the tree while criu holds it (post-dump,
  post-restore) gets no answer, with nftables and with iptables; with
  --network-lock skip it does; no lock is left afterwards, also when criu
  is killed in the middle of a dump or a dump is refused.
- Failed restores leave no veth, no lock, no namespace behind.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

import zdtm
from test_errors import check_clean_error

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

PROGRAM = "mem_anon"            # any zdtm program: the tree only has to live and pass
TOOLS = ("ip", "nft", "nsenter", "unshare", "busybox", "iptables-legacy-save")


def tool(name: str) -> Optional[str]:
    for path in (shutil.which(name), f"/usr/sbin/{name}", f"/sbin/{name}"):
        if path and os.access(path, os.X_OK):
            return path
    return None


@pytest.fixture(autouse=True)
def _need_tools():
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")
    missing = [t for t in TOOLS if not tool(t)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (scripts/install-deps.sh)")


def run_in(ns: str, script: str, check: bool = True,
           timeout: float = 30) -> subprocess.CompletedProcess:
    """sh -c @script in network namespace @ns (a /proc/PID/ns/net path)."""
    p = subprocess.run([tool("nsenter") or "nsenter", f"--net={ns}", "sh", "-c", script],
                       capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin"))
    if check and p.returncode:
        raise AssertionError(f"in {ns}: {script!r} failed ({p.returncode}): {p.stderr}")
    return p


class Netns:
    """A network namespace of the test's, held by a sleeping process."""

    def __init__(self, private: Optional[Path] = None) -> None:
        """private: a mount namespace too, with a tmpfs of its own there
        (another host's view of that directory)."""
        ours = os.stat("/proc/self/ns/net").st_ino
        unshare = tool("unshare") or "unshare"
        if private is None:
            cmd = [unshare, "-n", "sleep", "1d"]
        else:
            cmd = [unshare, "-n", "-m", "--propagation", "private", "sh", "-c",
                   'mount -t tmpfs -o mode=0700 zdtm-host "$0" && exec sleep 1d', str(private)]
        self.proc = subprocess.Popen(cmd)
        self.path = f"/proc/{self.proc.pid}/ns/net"
        deadline = time.monotonic() + 10
        while os.stat(self.path).st_ino == ours or \
                (private is not None and not self.mounted(private)):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{' '.join(cmd)} did not make its namespaces")
            time.sleep(0.01)
        self.ino = os.stat(self.path).st_ino
        self.sh("ip link set lo up")

    def view(self, path: Path) -> Path:
        """path as this namespace's mount view has it."""
        return Path(f"/proc/{self.proc.pid}/root{path}")

    def mounted(self, path: Path) -> bool:
        try:
            return os.stat(self.view(path)).st_dev != os.stat(path).st_dev
        except OSError:
            return False

    def sh(self, script: str, check: bool = True) -> str:
        return run_in(self.path, script, check).stdout

    def ping(self, addr: str) -> bool:
        return run_in(self.path, f"busybox ping -c 1 -W 1 {addr} >/dev/null 2>&1",
                      check=False).returncode == 0

    def links(self) -> list[str]:
        return sorted(line.split(": ")[1].split("@")[0]
                      for line in self.sh("ip -o link show").splitlines())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def host():
    """criu's namespace for the test: a bridge br0 with 10.55.0.1/24."""
    h = Netns()
    h.sh("ip link add br0 type bridge && ip addr add 10.55.0.1/24 dev br0 && "
         "ip -6 addr add fd55::1/64 dev br0 nodad && ip link set br0 up")
    yield h
    h.close()


def tree_ns(pid: int) -> str:
    return f"/proc/{pid}/ns/net"


def start_tree(r: zdtm.Run, host: Netns, own_ns: bool = True) -> None:
    """The program in a namespace of its own (unshare -n keeps the pid), born
    in @host's; criu runs in @host's."""
    r.start_prefix = [tool("nsenter") or "nsenter", f"--net={host.path}"]
    if own_ns:
        r.start_prefix += [tool("unshare") or "unshare", "-n"]
    r.criu_prefix = [tool("nsenter") or "nsenter", f"--net={host.path}"]
    r.start()


def add_veth(r: zdtm.Run, host: Netns, outside: str = "vh0") -> None:
    """eth0 in the tree (10.55.0.2, fd55::2), its peer @outside in host's br0."""
    host.sh(f"ip link add {outside} type veth peer name eth0 netns {r.pid} && "
            f"ip link set {outside} master br0 up")
    run_in(tree_ns(r.pid), "ip link set lo up && ip link set eth0 up && "
           "ip addr add 10.55.0.2/24 dev eth0 && ip -6 addr add fd55::2/64 dev eth0 nodad")


def wait_gone(ns: Netns, link: str, timeout: float = 15) -> None:
    """A killed tree's namespace goes (and its veth peers with it) a moment later."""
    deadline = time.monotonic() + timeout
    while link in ns.links():
        if time.monotonic() > deadline:
            raise AssertionError(f"{link} still in the namespace {timeout} s later")
        time.sleep(0.05)


def criu_tables(ns: str) -> list[str]:
    """criu's lock: nftables tables and legacy iptables chains of criu's."""
    out = run_in(ns, "nft list tables; iptables-legacy-save 2>/dev/null; "
                 "ip6tables-legacy-save 2>/dev/null", check=False).stdout
    return [line for line in out.splitlines() if "criu" in line]


def no_lock_left(ns: str, timeout: float = 5) -> bool:
    """criu's tables go a moment after criu (a child of its takes them away:
    ns-net-lock.c); the lock itself is open at once (the probes check that)."""
    deadline = time.monotonic() + timeout
    while criu_tables(ns):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


UDP_SERVER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.55.0.1", 5555)); s.settimeout(10)
open(sys.argv[1], "w").close()
data, peer = s.recvfrom(100); s.sendto(b"echo " + data, peer)
"""

UDP_CLIENT = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.55.0.2", 0)); s.settimeout(5)
s.sendto(b"hello", ("10.55.0.1", 5555)); print(s.recvfrom(100)[0].decode())
"""


def udp_roundtrip(r: zdtm.Run, host: Netns) -> None:
    """A fresh process inside binds a UDP socket to the tree's address and
    gets an answer from the outside: the restored link carries traffic."""
    ready = r.dir / "udp.ready"
    server = subprocess.Popen([tool("nsenter") or "nsenter", f"--net={host.path}", "python3",
                               "-c", UDP_SERVER, str(ready)])
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        out = run_in(tree_ns(r.pid), f"python3 -c '{UDP_CLIENT}'", check=False)
        assert out.stdout.strip() == "echo hello", \
            f"no UDP answer through the restored veth: {out.stdout!r} {out.stderr!r}"
    finally:
        server.kill()
        server.wait()
        ready.unlink(missing_ok=True)


def check_connected(r: zdtm.Run, host: Netns) -> None:
    ns = tree_ns(r.pid)
    assert host.ping("10.55.0.2"), "the outside can't ping the restored tree"
    assert run_in(ns, "busybox ping -c 1 -W 2 10.55.0.1", check=False).returncode == 0, \
        "a fresh process in the restored tree can't ping the outside"
    assert run_in(ns, "busybox ping -c 1 -W 2 fd55::1", check=False).returncode == 0, \
        "no IPv6 from the restored tree"
    udp_roundtrip(r, host)


def eth0(pid: int) -> str:
    """What matters of eth0: MAC, MTU, flags, addresses (no ifindex of the peer)."""
    link = run_in(tree_ns(pid), "ip -o link show eth0").stdout
    addrs = run_in(tree_ns(pid), "ip -o addr show dev eth0 scope global").stdout
    mac = link.split("link/ether ")[1].split()[0]
    mtu = link.split(" mtu ")[1].split()[0]
    flags = link.split("<")[1].split(">")[0]
    return f"{mac} mtu {mtu} <{flags}> " + " ".join(
        line.split()[3] for line in addrs.splitlines())


# ------------------------------------------------------------------- veth

@pytest.mark.parametrize("flavour", ["plain", "leave-running", "veth-pair"])
def test_veth_across(host, flavour):
    """eth0 inside, its peer vh0 outside in br0: after restore with
    --external veth[eth0]:vh0@br0 (or CRIU's older --veth-pair
    eth0=vh0@br0) the peer is back in the bridge and both sides reach
    each other."""
    with zdtm.Run(PROGRAM, f"veth-{flavour}") as r:
        start_tree(r, host)
        add_veth(r, host)
        check_connected(r, host)
        before = eth0(r.pid)
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=flavour == "leave-running")
        if flavour == "leave-running":
            r.check_running("after dump --leave-running", snap)
            check_connected(r, host)
            r.kill()
        wait_gone(host, "vh0")
        r.restore_ok(img, ["--veth-pair", "eth0=vh0@br0"] if flavour == "veth-pair" else
                     ["--external", "veth[eth0]:vh0@br0"])
        r.check_running("after restore", snap)
        assert eth0(r.pid) == before
        master = host.sh("ip -o link show vh0")
        assert "master br0" in master and "UP" in master, master
        check_connected(r, host)
        assert no_lock_left(tree_ns(r.pid)), "a lock is left in the restored tree"
        r.finish()
        wait_gone(host, "vh0")


def test_veth_peer_named_by_kernel(host):
    """Without --external veth the peer is made in criu's namespace under a
    name the kernel picks, down where the inside had no carrier, and goes
    with the tree."""
    with zdtm.Run(PROGRAM, "veth-kernel-name") as r:
        start_tree(r, host)
        add_veth(r, host)
        img = r.imgdir("img")
        r.dump_ok(img)
        wait_gone(host, "vh0")
        links = host.links()
        r.restore_ok(img)
        new = [n for n in host.links() if n not in links]
        assert len(new) == 1 and new[0].startswith("veth"), \
            f"expected one veth* peer in criu's namespace, got {new}"
        assert "eth0" in run_in(tree_ns(r.pid), "ip -o link show").stdout
        r.finish()
        wait_gone(host, new[0])


def test_veth_pair_inside(host):
    """Both ends of a veth pair inside: made as a pair inside, nothing outside."""
    with zdtm.Run(PROGRAM, "veth-inside") as r:
        start_tree(r, host)
        run_in(tree_ns(r.pid), "ip link add a0 type veth peer name a1 && "
               "ip link set a0 up && ip link set a1 up && ip addr add 10.44.0.1/24 dev a0")
        before = run_in(tree_ns(r.pid), "ip -o link show; ip -o -4 addr show").stdout
        links = host.links()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        assert host.links() == links, "a link appeared in criu's namespace"
        after = run_in(tree_ns(r.pid), "ip -o link show; ip -o -4 addr show").stdout
        assert after == before
        r.finish()


# ---------------------------------------------------------------- macvlan

def macvlan_tree(r: zdtm.Run, host: Netns, addr: str = "") -> None:
    """r's tree started in a namespace of its own with mv0 on low0 of
    criu's namespace (a veth pair low0/low1 the test made), up, and with
    @addr/24 if given."""
    start_tree(r, host)
    p = run_in(host.path, f"ip link add mv0 link low0 netns {r.pid} type macvlan "
               "mode bridge", check=False)
    if "Unknown device type" in p.stderr:
        pytest.skip("this kernel has no macvlan driver")
    assert p.returncode == 0, p.stderr
    run_in(tree_ns(r.pid), "ip link set mv0 up" +
           (f" && ip addr add {addr}/24 dev mv0" if addr else ""))


@pytest.mark.parametrize("given", [False, True], ids=["lower-by-name", "lower-given"])
def test_macvlan(host, given):
    """mv0 inside on low0 of criu's namespace: made again on low0 (the
    dump's name), or on low1 with --external macvlan[mv0]:low1. Its
    outside can't be held down: the nftables lock keeps the restored tree
    quiet until it runs (a ping at post-restore gets no answer)."""
    host.sh("ip link add low0 type veth peer name low1 && ip link set low0 up && "
            "ip link set low1 up && ip addr add 10.33.0.1/24 dev low1")
    with zdtm.Run(PROGRAM, "macvlan") as r:
        macvlan_tree(r, host, "10.33.0.2")
        before = run_in(tree_ns(r.pid), "ip -o -d link show mv0").stdout
        img = r.imgdir("img")
        r.dump_ok(img)
        probe, out = probe_script(r, "post-restore", "10.33.0.2")
        r.restore_ok(img, (["--external", "macvlan[mv0]:low1"] if given else []) +
                     ["--action-script", str(probe)])
        if not given:
            assert out.read_text().split() == ["none"], "the macvlan was not locked"
            assert host.ping("10.33.0.2"), "no traffic through the macvlan after restore"
            assert no_lock_left(tree_ns(r.pid)), "a lock is left after the restore"
        after = run_in(tree_ns(r.pid), "ip -o -d link show mv0").stdout
        lower = host.sh(f"ip -o link show {'low1' if given else 'low0'}").split(":")[0]
        assert f"mv0@if{lower}:" in after, f"mv0 is not on the right lower link: {after}"
        assert "macvlan mode bridge" in after
        mac = before.split("link/ether ")[1].split()[0]
        assert f"link/ether {mac}" in after
        assert "10.33.0.2/24" in run_in(tree_ns(r.pid), "ip -o addr show mv0").stdout
        r.finish()


def test_macvlan_dead_ns_lingers(host):
    """After a dump the dumped namespace, with its mv0, lives on a little
    (the kernel frees dead namespaces from a workqueue; here a process holds
    it 1.5 s): the restored mv0 has the same address on the same lower link,
    so it can't go up until the old one is gone. The restore waits for it
    instead of failing with "Object exists"."""
    host.sh("ip link add low0 type veth peer name low1 && ip link set low0 up && "
            "ip link set low1 up")
    with zdtm.Run(PROGRAM, "macvlan-linger") as r:
        macvlan_tree(r, host)
        holder = subprocess.Popen([tool("nsenter") or "nsenter", f"--net={tree_ns(r.pid)}",
                                   "sleep", "1.5"])
        try:
            img = r.imgdir("img")
            r.dump_ok(img)
            assert holder.poll() is None, "the holder of the old namespace ended too soon"
            r.restore_ok(img)
        finally:
            holder.wait()
        assert ",UP," in run_in(tree_ns(r.pid), "ip -o link show mv0").stdout
        r.finish()


# --------------------------------------------------------------- empty-ns

@pytest.mark.parametrize("when", ["dump", "restore"])
def test_empty_ns(host, when):
    """--empty-ns net (runc's way): at the dump nothing of the namespace is
    saved, at the restore nothing of it is restored: lo up, nothing else."""
    with zdtm.Run(PROGRAM, f"empty-ns-{when}") as r:
        start_tree(r, host)
        add_veth(r, host)
        img = r.imgdir("img")
        r.dump_ok(img, ["--empty-ns", "net"] if when == "dump" else [])
        wait_gone(host, "vh0")
        links = host.links()
        r.restore_ok(img, ["--empty-ns", "net"] if when == "restore" else [])
        assert host.links() == links, "a link appeared in criu's namespace"
        ns = tree_ns(r.pid)
        assert os.stat(ns).st_ino not in (host.ino, os.stat("/proc/self/ns/net").st_ino)
        out = run_in(ns, "ip -o link show").stdout.splitlines()
        assert len(out) == 1 and " lo: " in out[0] and ",UP," in out[0], out
        addrs = run_in(ns, "ip -o addr show").stdout
        assert "127.0.0.1/8" in addrs and "10.55" not in addrs, addrs
        r.finish()


# ---------------------------------------------------- external namespaces

def test_external_netns(host):
    """--external net[INODE]:KEY at the dump, --inherit-fd fd[N]:KEY at the
    restore: the tree comes back into the very namespace, which kept its
    links and stayed locked (table inet criu_lock_kept) in between."""
    x = Netns()
    try:
        x.sh("ip link add x0 type veth peer name x1 && ip link set x0 up && "
             "ip link set x1 up && ip addr add 10.66.0.1/24 dev x0")
        before = x.sh("ip -o link show; ip -o -4 addr show")
        with zdtm.Run(PROGRAM, "external-netns") as r:
            r.start_prefix = [tool("nsenter") or "nsenter", f"--net={x.path}"]
            r.criu_prefix = [tool("nsenter") or "nsenter", f"--net={host.path}"]
            r.start()
            assert os.stat(tree_ns(r.pid)).st_ino == x.ino
            img = r.imgdir("img")
            r.dump_ok(img, ["--external", f"net[{x.ino}]:xnet"])
            assert any("criu_lock_kept" in t for t in criu_tables(x.path)), \
                "the namespace is not locked between the dump and the restore"
            res, _ = r.restore(img)
            check_clean_error(r, res, "restore of an external namespace without it",
                              ("xnet",))
            assert criu_tables(x.path), "a refused restore took the dump's lock away"
            fd = os.open(x.path, os.O_RDONLY)
            try:
                r.criu_fds = (fd,)
                r.restore_ok(img, ["--inherit-fd", f"fd[{fd}]:xnet"])
            finally:
                os.close(fd)
            assert os.stat(tree_ns(r.pid)).st_ino == x.ino, "not back in its namespace"
            assert x.sh("ip -o link show; ip -o -4 addr show") == before
            assert no_lock_left(x.path), "the namespace is still locked"
            r.finish()
    finally:
        x.close()


def test_inherit_fd_not_a_netns(host):
    """A key given an fd that is no network namespace: one Error line."""
    x = Netns()
    try:
        with zdtm.Run(PROGRAM, "inherit-fd-bad") as r:
            r.start_prefix = [tool("nsenter") or "nsenter", f"--net={x.path}"]
            r.criu_prefix = [tool("nsenter") or "nsenter", f"--net={host.path}"]
            r.start()
            img = r.imgdir("img")
            r.dump_ok(img, ["--external", f"net[{x.ino}]:xnet"])
            fd = os.open("/dev/null", os.O_RDONLY)
            try:
                r.criu_fds = (fd,)
                res, _ = r.restore(img, ["--inherit-fd", f"fd[{fd}]:xnet"])
            finally:
                os.close(fd)
            check_clean_error(r, res, "restore with a wrong fd", ("network namespace",))
            r.ours = r.alive = False
    finally:
        x.close()


# ------------------------------------------------------------ the lock

PROBE = """#!/bin/sh
# criu's action script: at {action}, can the outside ping the tree?
[ "$CRTOOLS_SCRIPT_ACTION" = "{action}" ] || exit 0
if busybox ping -c 1 -W 1 {addr} >/dev/null 2>&1; then r=reply; else r=none; fi
echo $r >> {out}
exit 0
"""


def probe_script(r: zdtm.Run, action: str, addr: str = "10.55.0.2") -> tuple[Path, Path]:
    out = r.dir / f"probe-{action}"
    script = r.dir / f"probe-{action}.sh"
    script.write_text(PROBE.format(action=action, out=out, addr=addr))
    script.chmod(0o700)
    return script, out


@pytest.mark.parametrize("method", ["nftables", "iptables", "skip"])
def test_network_lock(host, method):
    """While criu holds the tree (post-dump: frozen, images written;
    post-restore: everything restored, nothing runs) the outside gets no
    answer; afterwards it does, and no lock is left. With skip it always
    does: the probe itself works."""
    with zdtm.Run(PROGRAM, f"lock-{method}") as r:
        start_tree(r, host)
        add_veth(r, host)
        assert host.ping("10.55.0.2")
        dump_probe, dump_out = probe_script(r, "post-dump")
        img = r.imgdir("img")
        lock = ["--network-lock", method]
        r.dump_ok(img, lock + ["--action-script", str(dump_probe)], leave_running=True)
        want = "reply" if method == "skip" else "none"
        assert dump_out.read_text().split() == [want], \
            f"post-dump probe: {dump_out.read_text()!r}, expected {want}"
        assert host.ping("10.55.0.2"), "the network is still locked after the dump"
        assert no_lock_left(tree_ns(r.pid)), "a lock is left after the dump"
        r.kill()
        wait_gone(host, "vh0")
        rst_probe, rst_out = probe_script(r, "post-restore")
        r.restore_ok(img, lock + ["--external", "veth[eth0]:vh0@br0",
                                  "--action-script", str(rst_probe)])
        assert rst_out.read_text().split() == [want], \
            f"post-restore probe: {rst_out.read_text()!r}, expected {want}"
        assert host.ping("10.55.0.2"), "the network is still locked after the restore"
        assert no_lock_left(tree_ns(r.pid)), "a lock is left after the restore"
        r.finish()


@pytest.mark.parametrize("method", ["nftables", "iptables"])
@pytest.mark.parametrize("point", ["net-locked", "seized", "infected", "written"])
def test_lock_gone_when_criu_killed(host, method, point):
    """criu killed at a point of a dump (CRIU_FAULT) leaves no lock: the
    nftables table has criu's socket as owner, the iptables rules a
    watchdog that outlives criu."""
    with zdtm.Run(PROGRAM, f"lock-killed-{point}") as r:
        start_tree(r, host)
        add_veth(r, host)
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), ["--network-lock", method],
                     env=dict(os.environ, CRIU_FAULT=point))
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT={point}: criu exited with {res.returncode}", res)
        assert no_lock_left(tree_ns(r.pid), 10), f"criu killed at {point} left its lock"
        assert host.ping("10.55.0.2"), f"criu killed at {point}: no traffic"
        r.check_running(f"after criu was killed at {point}", snap)
        r.finish()


def test_refused_dump_leaves_no_lock(host):
    """A link criu can't make again (a bridge inside) is refused by name,
    with the option that would help; the tree runs on, unlocked."""
    with zdtm.Run(PROGRAM, "refused-bridge") as r:
        start_tree(r, host)
        add_veth(r, host)
        run_in(tree_ns(r.pid), "ip link add br9 type bridge")
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"))
        line = check_clean_error(r, res, "dump of a bridge inside", ("br9",), r.pid)
        assert "bridge" in line and "--empty-ns net" in line, line
        assert no_lock_left(tree_ns(r.pid)), "a refused dump left its lock"
        assert host.ping("10.55.0.2")
        r.check_running("after the refused dump", snap)
        r.finish()


# ------------------------------------------------------- failed restores

def netns_of_log(log: Path) -> int:
    """The namespace a restore made, as its log names it."""
    m = re.search(r"network namespace net:\[(\d+)\]", log.read_text())
    assert m, f"{log} names no network namespace"
    return int(m.group(1))


def netns_in_use(ino: int) -> list[int]:
    """The processes that are in network namespace @ino."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and os.stat(d / "ns" / "net").st_ino == ino:
                pids.append(int(d.name))
        except OSError:
            pass
    return pids


def test_failed_restore_leaves_nothing(host):
    """A restore that fails after the veth is made (its bridge is missing)
    removes the peer it made; the tree's namespace goes with the tree."""
    with zdtm.Run(PROGRAM, "restore-fails") as r:
        start_tree(r, host)
        add_veth(r, host)
        img = r.imgdir("img")
        r.dump_ok(img)
        wait_gone(host, "vh0")
        links = host.links()
        res, _ = r.restore(img, ["--external", "veth[eth0]:vh0@nosuchbr"])
        check_clean_error(r, res, "restore into a missing bridge", ("nosuchbr",))
        now = host.links()
        assert now == links, f"left behind: {set(now) - set(links)}"
        assert zdtm.proc_state(r.pid) in (None, "X"), "the tree is still there"
        ns = netns_of_log(img / "restore.log")
        assert netns_in_use(ns) == [], f"processes left in net:[{ns}]"
        res, _ = r.restore(img, ["--external", "veth[eth0]:lo"])
        check_clean_error(r, res, "restore onto a name in use", ("lo",))
        assert host.links() == links
        r.restore_ok(img, ["--external", "veth[eth0]:vh0@br0"])
        check_connected(r, host)
        r.finish()


def test_restore_killed_leaves_nothing(host):
    """criu killed once the namespace is filled: the tree dies with it, its
    namespace and the veth peer made outside with them."""
    with zdtm.Run(PROGRAM, "restore-killed") as r:
        start_tree(r, host)
        add_veth(r, host)
        img = r.imgdir("img")
        r.dump_ok(img)
        wait_gone(host, "vh0")
        links = host.links()
        res, _ = r.restore(img, ["--external", "veth[eth0]:vh0@br0"],
                           env=dict(os.environ, CRIU_FAULT="net-filled"))
        assert res.returncode == -signal.SIGKILL, res.describe()
        wait_gone(host, "vh0")
        deadline = time.monotonic() + 10
        while zdtm.proc_state(r.pid) not in (None, "X") and time.monotonic() < deadline:
            zdtm.reap_leftovers()
            time.sleep(0.05)
        assert host.links() == links
        r.restore_ok(img, ["--external", "veth[eth0]:vh0@br0"])
        r.finish()
