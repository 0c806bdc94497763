"""The container test: ctr (contrib/container) builds a container the way
runc's default spec does, without any container runtime; a service inside
it (ctr-service: a counter on a tmpfs, a unix socket server); and criu
against it.

- ctr itself: every namespace, mount, device node, masked and read-only
  path of the OCI default spec; hostname; cgroups (v1 hierarchies of this
  hybrid host and the unified one) with limits; a veth pair with
  addresses; volumes; a user namespace; a console pty handed over a unix
  socket; the --init reaper; runc's process restrictions; each failure
  reported in one line with everything undone.
- Every test leaves the host as it found it: hoststate.py compares mounts,
  names and sysctls around every test; an autouse fixture here adds the
  network links and cgroups this session names.
- criu: today a dump of the container is refused with one Error line
  naming a namespace, and the container runs on untouched.  The round
  trips (dump, tear the namespaces down, restore with --root, the counter
  and the server go on where they were) skip with the reason while criu
  refuses, found out by trying: they run for real the day it dumps.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

import container as ct
import zdtm

TAG = f"zc{os.getpid()}"            # veth names (15 characters at most)
CGPARENT = f"zdtm-ctr-{os.getpid()}"  # cgroups, below the session's own
PREFIXES = (TAG, CGPARENT)

PROBE = ("mkdir -p /dev/shm/probe; cd /dev/shm/probe; hostname > hostname; "
         "cat /proc/self/cgroup > cgroup; id -u > uid; touch done; exec sleep 100000")


@pytest.fixture(autouse=True)
def _ctr_here() -> None:
    why = ct.available()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return ct.copy_rootfs(tmp_path_factory.mktemp("ctr") / "root")
    except ct.ContainerError as e:
        pytest.skip(str(e))


@pytest.fixture(autouse=True)
def host_untouched() -> Iterator[None]:
    before = ct.HostView.take()
    yield
    diff = before.diff(ct.HostView.take(), PREFIXES)
    assert not diff, f"the test left the host changed:\n{diff}"


Make = Callable[..., ct.Container]


@pytest.fixture
def make(tmp_path: Path, root: Path) -> Iterator[Make]:
    """make(opts=[...], cmd=[...], start=True): a container, deleted at the
    end of the test whatever happened."""
    made: list[ct.Container] = []

    def _make(opts: Optional[list[str]] = None, cmd: Optional[list[str]] = None,
              start: bool = True) -> ct.Container:
        n = len(made)
        c = ct.Container(tmp_path, root, f"{TAG}-{n}", opts or [],
                         cmd or ["/usr/bin/ctr-service"])
        made.append(c)
        if start:
            c.start()
        return c

    yield _make
    for c in made:
        if c.state.exists():
            c.ctr("delete", "--state", str(c.state), c.name)
        ct.kill_tree(c.tasks())


def wait_for(what: str, cond: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def probe(c: ct.Container, name: str) -> str:
    """What the PROBE command saw inside."""
    wait_for("the probe inside the container", c.path("/dev/shm/probe/done").exists)
    return c.path(f"/dev/shm/probe/{name}").read_text().strip()


def run_probe(make: Make, opts: Optional[list[str]] = None) -> ct.Container:
    c = make(opts, ["/bin/sh", "-c", PROBE])
    probe(c, "done")
    return c


def cgroup_opts(name: str, *limits: str) -> list[str]:
    return ["--cgroup", f"{CGPARENT}/{name}", *limits]


# ------------------------------------------------------------------ the service

def count(c: ct.Container) -> int:
    try:
        return int(c.path("/dev/shm/count").read_text())
    except (OSError, ValueError):
        return 0


def counting(c: ct.Container) -> bool:
    first = count(c)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if count(c) > first:
            return True
        time.sleep(0.02)
    return False


def ask(c: ct.Container) -> tuple[int, int]:
    """The server's answer: (count, connections served before)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(str(c.path("/run/service.sock")))
        line = s.recv(200).decode()
    words = line.split()
    assert len(words) == 4 and words[0] == "count" and words[2] == "served", line
    return int(words[1]), int(words[3])


def wait_service(c: ct.Container) -> None:
    wait_for("the service's socket", c.path("/run/service.sock").exists)
    assert counting(c), "the counter does not count"


def test_service(make: Make) -> None:
    """ctr-service as the container's init: the counter counts on the
    tmpfs, the server answers and counts the connections it served."""
    c = make()
    wait_service(c)
    n0, s0 = ask(c)
    n1, s1 = ask(c)
    assert (s0, s1) == (0, 1) and n1 >= n0 > 0
    assert sorted(zdtm.ns_pid(p) for p in c.tasks()) == [1, 2, 3]


# ------------------------------------------------------------------ ctr itself

def test_namespaces(make: Make) -> None:
    """pid, mount, network, ipc, uts and cgroup namespaces of its own; the
    user namespace stays the host's; the command is pid 1 and leads a
    session of its own."""
    c = run_probe(make)
    for kind in ct.NS_KINDS:
        assert c.ns[kind] != ct.ns_id(os.getpid(), kind), kind
    assert c.ns["user"] == ct.ns_id(os.getpid(), "user")
    assert zdtm.ns_pid(c.pid) == 1
    assert os.getsid(c.pid) == c.pid
    assert probe(c, "cgroup").splitlines()[-1] == "0::/"


# mountpoint -> (fstype, source, flags that must be in the mount options,
# words that must be in the super options)
OCI_MOUNTS = {
    "/": (None, None, ("rw",), ()),
    "/proc": ("proc", "proc", ("rw",), ()),
    "/dev": ("tmpfs", "tmpfs", ("rw", "nosuid"), ("mode=755", "size=65536k")),
    "/dev/pts": ("devpts", "devpts", ("nosuid", "noexec"),
                 ("gid=5", "mode=620", "ptmxmode=666")),
    "/dev/shm": ("tmpfs", "shm", ("nosuid", "nodev", "noexec"), ("size=65536k",)),
    "/dev/mqueue": ("mqueue", "mqueue", ("nosuid", "nodev", "noexec"), ()),
    "/sys": ("sysfs", "sysfs", ("ro", "nosuid", "nodev", "noexec"), ()),
}
MASKED = ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
          "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
          "/proc/scsi"]
READONLY = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]


def mounts_by_point(pid: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in ct.read_mountinfo(pid):
        assert m[0] not in out, f"{m[0]} mounted twice: {out[m[0]]} and {m}"
        out[m[0]] = m
    return out


def test_oci_mounts(make: Make, root: Path) -> None:
    """The mounts of runc's default spec, in its order, with its options;
    the root is the rootfs (pivot_root: nothing of the host's tree is left
    but the root's own mount); nothing is shared with the host."""
    c = run_probe(make)
    mounts = ct.read_mountinfo(c.pid)
    by = mounts_by_point(c.pid)
    assert mounts[0][0] == "/", mounts[0]
    assert os.stat(f"/proc/{c.pid}/root").st_ino == os.stat(root).st_ino
    order = [m[0] for m in mounts if m[0] in OCI_MOUNTS]
    assert order == list(OCI_MOUNTS), order
    for point, (fstype, source, flags, words) in OCI_MOUNTS.items():
        m = by[point]
        assert fstype in (None, m[3]) and source in (None, m[4]), m
        opts, sopts = m[2].split(","), m[5].split(",")
        assert all(f in opts for f in flags), (point, m)
        assert all(w in sopts for w in words), (point, m)
    expected = set(OCI_MOUNTS) | {"/sys/fs/cgroup"}
    expected |= {p for p in MASKED + READONLY if os.path.exists(p)}
    cg = {p for p in by if p.startswith("/sys/fs/cgroup/")}
    assert set(by) - cg == expected, sorted(set(by) - cg ^ expected)
    for line in Path(f"/proc/{c.pid}/mountinfo").read_text().splitlines():
        assert "shared:" not in line.split(" - ")[0], line


def test_dev(make: Make) -> None:
    """/dev: the device nodes made with mknod on the tmpfs (as root), the
    symlinks; /dev/ptmx leads to the container's own devpts."""
    c = run_probe(make)
    nodes = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8),
             "urandom": (1, 9), "tty": (5, 0)}
    for name, (major, minor) in nodes.items():
        st = os.lstat(c.path(f"/dev/{name}"))
        assert stat.S_ISCHR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o666, name
        assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (major, minor), name
    links = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}
    for name, target in links.items():
        assert os.readlink(c.path(f"/dev/{name}")) == target, name
    devs = {os.lstat(c.path(f"/dev/{n}")).st_dev for n in nodes}
    assert len(devs) == 1, "the nodes are not all on the /dev tmpfs"


def test_masked_and_readonly(make: Make) -> None:
    """Masked files are /dev/null of the container's /dev, masked
    directories a read-only tmpfs; the read-only paths are read-only
    self-binds of the container's proc."""
    c = run_probe(make)
    by = mounts_by_point(c.pid)
    dev = by["/dev"]
    for p in MASKED:
        if not os.path.exists(p):
            assert p not in by, p
            continue
        m = by[p]
        if os.path.isdir(p):
            assert m[3] == "tmpfs" and "ro" in m[2].split(","), m
        else:
            assert m[1] == "/null" and m[3] == dev[3] and m[5] == dev[5], m
    for p in READONLY:
        if not os.path.exists(p):
            continue
        m = by[p]
        assert m[3] == "proc" and m[1] == p[len("/proc"):] and "ro" in m[2].split(","), m
    st = os.stat(c.path("/proc/keys"))
    assert stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3)


def fd_mounts(pid: int) -> dict[int, tuple[str, int]]:
    """fd -> (link target, mount id) of a task."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines()
        mnt = [int(line.split()[1]) for line in info if line.startswith("mnt_id:")][0]
        out[int(fd)] = (os.readlink(f"/proc/{pid}/fd/{fd}"), mnt)
    return out


@pytest.mark.parametrize("output", [None, "/run/out.log"])
def test_detached_stdio(make: Make, output: Optional[str]) -> None:
    """A detached container holds no file of the host: its stdio are its
    own /dev/null, or the -o file in its root, opened inside."""
    c = make(["-o", output] if output else [], ["/bin/sh", "-c", "exec sleep 100000"])
    wait_for("the container's command", lambda: Path(f"/proc/{c.pid}/comm").read_text()
             .strip() == "sleep")
    fds = fd_mounts(c.pid)
    ids = {int(line.split()[0]): line.split()[4]
           for line in Path(f"/proc/{c.pid}/mountinfo").read_text().splitlines()}
    assert sorted(fds) == [0, 1, 2], fds
    for fd, (target, mnt) in fds.items():
        assert mnt in ids, f"fd {fd} ({target}) is on a mount of the host"
        want = output if output and fd else "/dev/null"
        assert target == want and ids[mnt] == ("/" if target == output else "/dev"), \
            (fd, target, ids[mnt])


def test_hostname(make: Make) -> None:
    """The hostname is the name (or --hostname); the host's stays."""
    c = run_probe(make)
    assert probe(c, "hostname") == c.name
    assert ct.nsenter(c.pid, "u", "hostname").stdout.strip() == c.name
    c2 = run_probe(make, ["--hostname", "box.example"])
    assert probe(c2, "hostname") == "box.example"


def test_cgroups(make: Make) -> None:
    """--cgroup below ctr's own cgroup in cpu, memory, pids, freezer and the
    unified hierarchy, with the limits written; the container's cgroup
    namespace is rooted there; /sys/fs/cgroup inside mirrors the host's
    hierarchies, read-only; delete removes every directory it made."""
    c = run_probe(make, cgroup_opts("cg", "--memory", "64m", "--pids", "50",
                                    "--cpu-quota", "20000", "--cpu-shares", "256"))
    dirs = c.state_entries("cgroup")
    parents = c.state_entries("cgroup-parent")
    mnts = [m for m, _ in ct.cgroup_mounts()]
    want = [m for m in mnts if os.path.basename(m) in
            ("cpu", "memory", "pids", "freezer", "unified")]
    assert sorted(os.path.dirname(os.path.dirname(d)) for d in dirs) == sorted(
        os.path.dirname(d) for d in parents)
    assert len(dirs) == len(want), dirs
    for d in dirs:
        assert d.endswith(f"/{CGPARENT}/cg") and os.path.isdir(d), d
        assert str(c.pid) in Path(d, "cgroup.procs").read_text().split()
    files = {"memory.limit_in_bytes": "67108864", "pids.max": "50",
             "cpu.cfs_quota_us": "20000", "cpu.cfs_period_us": "100000", "cpu.shares": "256"}
    for f, v in files.items():
        found = [d for d in dirs if os.path.exists(f"{d}/{f}")]
        assert found and Path(found[0], f).read_text().strip() == v, f
    for line in probe(c, "cgroup").splitlines():
        assert line.endswith(":/"), line      # the cgroup namespace's root
    by = mounts_by_point(c.pid)
    assert by["/sys/fs/cgroup"][3] == "tmpfs" and "ro" in by["/sys/fs/cgroup"][2]
    for m in mnts:
        inner = by[m]
        assert "ro" in inner[2].split(",") and inner[3] in ("cgroup", "cgroup2"), inner
    c.delete()
    left = c.leftovers(dirs + parents)
    assert not left, left


@pytest.mark.parametrize("mode", ["v2", "none"])
def test_cgroupfs_modes(make: Make, mode: str) -> None:
    """--cgroupfs v2: one read-only cgroup2 at /sys/fs/cgroup (what runc
    mounts on a pure v2 host); none: nothing there."""
    c = run_probe(make, ["--cgroupfs", mode])
    cg = [m for m in ct.read_mountinfo(c.pid) if m[0].startswith("/sys/fs/cgroup")]
    if mode == "none":
        assert cg == []
    else:
        assert len(cg) == 1 and cg[0][3] == "cgroup2" and "ro" in cg[0][2].split(","), cg


def test_veth(make: Make) -> None:
    """--veth: the host end (no address) and eth0 inside with v4 and v6
    addresses, up, and a default route; gone after delete."""
    host = f"{TAG}h"
    c = run_probe(make, ["--veth", host, "--ip", "10.213.7.2/24", "--ip", "fd00:213:7::2/64",
                         "--gw", "10.213.7.1"])
    assert c.state_entries("veth") == [host]
    assert Path(f"/sys/class/net/{host}/operstate").read_text().strip() in ("up", "unknown")
    assert "inet " not in subprocess.run(["ip", "-o", "addr", "show", host],
                                         capture_output=True, text=True).stdout
    addrs = ct.nsenter(c.pid, "n", "ip", "-o", "addr", "show", "eth0").stdout
    assert "10.213.7.2/24" in addrs and "fd00:213:7::2/64" in addrs, addrs
    route = ct.nsenter(c.pid, "n", "ip", "route", "show", "default").stdout
    assert "via 10.213.7.1 dev eth0" in route, route
    lo = ct.nsenter(c.pid, "n", "ip", "-o", "addr", "show", "lo").stdout
    assert "127.0.0.1/8" in lo, lo
    peer = c.path("/sys/class/net/eth0/iflink").read_text().strip()   # its own sysfs
    assert Path(f"/sys/class/net/{host}/ifindex").read_text().strip() == peer
    c.delete()
    assert not c.leftovers([], host)


def test_volumes(make: Make, tmp_path: Path) -> None:
    """-v binds a host directory (read-write) and a file (read-only)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "in").write_text("from the host\n")
    conf = tmp_path / "conf"
    conf.write_text("x=1\n")
    c = run_probe(make, ["-v", f"{data}:/mnt/data", "-v", f"{conf}:/etc/conf:ro"])
    by = mounts_by_point(c.pid)
    assert "rw" in by["/mnt/data"][2].split(",") and "ro" in by["/etc/conf"][2].split(",")
    assert os.stat(c.path("/mnt/data")).st_ino == os.stat(data).st_ino
    assert os.stat(c.path("/etc/conf")).st_ino == os.stat(conf).st_ino
    assert c.path("/mnt/data/in").read_text() == "from the host\n"
    assert c.path("/etc/conf").read_text() == "x=1\n"
    c.path("/mnt/data/out").write_text("from inside\n")
    assert (data / "out").read_text() == "from inside\n"


@pytest.fixture
def open_root(root: Path) -> Iterator[Path]:
    """A rootfs whose every parent directory anyone may search (a mapped
    root in a user namespace is nobody to the host's directories)."""
    base = Path(tempfile.mkdtemp(prefix="zdtm-ctr.", dir="/tmp"))
    try:
        os.chmod(base, 0o711)
        yield ct.copy_rootfs(base / "root")
    finally:
        ct.remove_tree(base)


def test_userns(make: Make, tmp_path: Path, open_root: Path) -> None:
    """--userns: a user namespace with the default maps; root inside is
    100000 outside; devices are the host's, bound (no mknod there).  A
    rootfs the mapped root can't reach is refused in one line saying so."""
    c = make(["--userns"], start=False)
    p = c.try_start()
    assert p.returncode == 1 and "must be searchable by the mapped root" in p.stderr, p.stderr
    c = make(["--userns"] + cgroup_opts("us"), ["/bin/sh", "-c", PROBE], start=False)
    c.root = open_root
    c.start()
    assert c.ns["user"] != ct.ns_id(os.getpid(), "user")
    for f in ("uid_map", "gid_map"):
        assert Path(f"/proc/{c.pid}/{f}").read_text().split() == ["0", "100000", "65536"]
    assert probe(c, "uid") == "0"
    uid = [line for line in Path(f"/proc/{c.pid}/status").read_text().splitlines()
           if line.startswith("Uid:")][0].split()
    assert uid[1] == "100000", uid
    assert mounts_by_point(c.pid)["/dev/null"][1] == "/null"
    c2 = make(["--userns", "--uidmap", "0:200000:1000", "--gidmap", "0:200000:1000"],
              ["/bin/sh", "-c", PROBE], start=False)
    c2.root = open_root
    c2.start()
    assert probe(c2, "uid") == "0"
    assert Path(f"/proc/{c2.pid}/uid_map").read_text().split() == ["0", "200000", "1000"]


def test_console(make: Make, tmp_path: Path) -> None:
    """--console-socket: the master of a pty of the container's devpts
    comes over the socket; the slave is /dev/console and the init's
    terminal: a line written to the master is read inside and answered."""
    path = tmp_path / "console.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen(1)
    c = make(["--console-socket", str(path)],
             ["/bin/sh", "-c", "read x; echo got $x; tty; exec sleep 100000"], start=False)
    p = subprocess.Popen([str(ct.CTR), *c.run_args()], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    srv.settimeout(10)
    conn, _ = srv.accept()
    msg, fds, _, _ = socket.recv_fds(conn, 100, 1)
    conn.close()
    srv.close()
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    c.pid = int(out)
    c.read_ns()
    master = fds[0]
    try:
        assert msg.decode().startswith("/dev/pts/")
        os.write(master, b"hello\n")
        seen = b""
        deadline = time.monotonic() + 10
        while b"/dev/pts/0" not in seen.split(b"got hello")[-1] and \
                time.monotonic() < deadline:
            seen += os.read(master, 1000)
        assert b"got hello" in seen and b"/dev/pts/0" in seen, seen
        m = mounts_by_point(c.pid)["/dev/console"]
        assert m[3] == "devpts" and m[1] == "/0", m
    finally:
        os.close(master)


def test_init_reaper(make: Make) -> None:
    """--init: pid 1 is /sbin/ctr init from the rootfs, the command its
    child (pid 2) leading its own session; SIGTERM to the container goes
    on to the command; the init exits with its status."""
    c = make(["--init"], ["/bin/sh", "-c", "trap 'exit 7' TERM; touch /dev/shm/up; "
                          "while :; do sleep 0.1; done"])
    wait_for("the command", c.path("/dev/shm/up").exists)
    init_exe = os.readlink(f"/proc/{c.pid}/exe")
    assert init_exe == "/sbin/ctr", init_exe
    assert Path(f"/proc/{c.pid}/cmdline").read_bytes().split(b"\0")[:3] == \
        [b"ctr", b"init", b"--"]
    child = [p for p in c.tasks() if zdtm.ns_pid(p) == 2][0]
    assert os.getsid(child) == child
    os.kill(c.pid, signal.SIGTERM)
    _, status = os.waitpid(c.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
    assert ct.reap_until_gone(c.tasks()) == []


def test_foreground(root: Path, tmp_path: Path) -> None:
    """Without -d: ctr waits, passes SIGTERM on, exits with the status and
    tears down (its cgroups are gone when it returns)."""
    name = f"{TAG}-fg"
    args = [str(ct.CTR), "run", "--name", name, *cgroup_opts("fg"), str(root), "--",
            "/bin/sh", "-c", "trap 'exit 5' TERM; touch /dev/shm/up; "
            "while :; do sleep 0.1; done"]
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    wait_for("the container", lambda: any(
        os.path.exists(f"/proc/{t}/root/dev/shm/up") for t in children(p.pid)))
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 5, err
    left = [m for m, _ in ct.cgroup_mounts() if os.path.exists(f"{m}/{CGPARENT}")]
    assert not left, left


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_read_only_and_restrict(make: Make) -> None:
    """--read-only: the root is read-only; --restrict: runc spec's process
    (AUDIT_WRITE, KILL, NET_BIND_SERVICE; no_new_privs; NOFILE 1024)."""
    c = run_probe(make, ["--read-only", "--restrict"])
    assert "ro" in mounts_by_point(c.pid)["/"][2].split(",")
    status = dict(line.split(":", 1) for line in
                  Path(f"/proc/{c.pid}/status").read_text().splitlines())
    want = (1 << 5) | (1 << 10) | (1 << 29)
    for f in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
        assert int(status[f], 16) == want, (f, status[f])
    assert status["NoNewPrivs"].strip() == "1"
    limits = Path(f"/proc/{c.pid}/limits").read_text()
    assert [w for w in limits.splitlines() if w.startswith("Max open files")][0].split()[3:5] \
        == ["1024", "1024"]


def test_propagation_private(make: Make) -> None:
    """--propagation private: none of the container's mounts is a slave of
    the host's (and with the default, none is shared with it)."""
    c = run_probe(make, ["--propagation", "private"])
    for line in Path(f"/proc/{c.pid}/mountinfo").read_text().splitlines():
        tags = line.split(" - ")[0].split()[6:]
        assert not tags, line


@pytest.mark.parametrize("mode", ["slave", "private"])
def test_nothing_propagates_out(root: Path, tmp_path: Path, mode: str) -> None:
    """In a mount namespace of the test's own whose mounts are all shared
    (as on hosts where systemd makes / shared), a container's mounts must
    not appear outside it: ctr makes its root a slave (or private) before
    it mounts anything."""
    script = tmp_path / "outer.sh"
    script.write_text(f"""
mount --make-rshared /
before=$(cut -d' ' -f5 /proc/self/mountinfo | sort)
{ct.CTR} run --propagation {mode} --name {TAG}-p {root} /bin/true || exit 9
after=$(cut -d' ' -f5 /proc/self/mountinfo | sort)
[ "$before" = "$after" ] || {{ echo "new: $(echo "$after" | grep -vxF "$before")"; exit 1; }}
""")
    p = subprocess.run(["unshare", "--mount", "--propagation", "unchanged", "sh", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


FAILURES: dict[str, tuple[list[str], list[str], str]] = {
    # what -> (options, command, words of the one error line)
    "command": ([], ["/nonexistent"], "exec /nonexistent in the container: No such file"),
    "address": (["--veth", f"{TAG}f", "--ip", "10.213.9.300/24"], ["/bin/true"],
                "bad address 10.213.9.300/24"),
    "output": (["--read-only", "--output", "/log"], ["/bin/true"],
                      "open /log in the container: Read-only file system"),
    "limit": (["--cgroup-controllers", "cpu", "--memory", "1m"], ["/bin/true"],
              "has the memory controller"),
}


@pytest.mark.parametrize("what", list(FAILURES))
def test_failure_undone(make: Make, what: str) -> None:
    """A container that can't be made: exit 1, one line "ctr: NAME: ..."
    naming what failed, and nothing left (cgroups, veth, state, tasks)."""
    opts, cmd, words = FAILURES[what]
    c = make(cgroup_opts(what) + opts, cmd, start=False)
    p = c.try_start()
    assert p.returncode == 1, p
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ctr: {c.name}: ") and words in lines[0], \
        p.stderr
    assert p.stdout == ""
    left = [m for m, _ in ct.cgroup_mounts() if os.path.exists(f"{m}/{CGPARENT}/{what}")]
    assert not left and not c.state.exists(), left
    assert not any(f.startswith(TAG) for f in os.listdir("/sys/class/net"))


def test_failure_taken(make: Make) -> None:
    """A cgroup or a veth name another container holds: refused in one
    line, the other container untouched, nothing of the new one left."""
    first = make(cgroup_opts("taken") + ["--veth", f"{TAG}t"])
    wait_service(first)
    for opts, words in ((cgroup_opts("taken"), "mkdir cgroup"),
                        (cgroup_opts("taken2") + ["--veth", f"{TAG}t"], "create veth")):
        c = make(opts, start=False)
        p = c.try_start()
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 1 and len(lines) == 1 and words in lines[0], p.stderr
        assert "File exists" in lines[0], lines[0]
    assert not any(os.path.exists(f"{m}/{CGPARENT}/taken2") for m, _ in ct.cgroup_mounts())
    assert first.alive() and counting(first) and ask(first)[1] == 0
    assert os.path.exists(f"/sys/class/net/{TAG}t")


def test_default_state(root: Path, tmp_path: Path) -> None:
    """Without --state, run -d records in /run/ctr/NAME and delete NAME
    undoes it; /run/ctr itself is left as it was, also when a start fails."""
    existed = os.path.exists("/run/ctr")
    c = ct.Container(tmp_path, root, f"{TAG}-ds", [], ["/bin/sleep", "100000"])
    p = c.ctr("run", "-d", "--name", c.name, str(root), "/bin/sleep", "100000")
    assert p.returncode == 0, p.stderr
    c.pid = int(p.stdout)
    c.read_ns()
    state = Path("/run/ctr", c.name)
    assert f"pid {c.pid}" in state.read_text().splitlines()
    p = c.ctr("delete", c.name)
    assert p.returncode == 0 and not state.exists(), p.stderr
    assert ct.reap_until_gone(c.tasks()) == []
    assert os.path.exists("/run/ctr") == existed
    p = c.ctr("run", "-d", "--name", c.name, str(root), "/nonexistent")
    assert p.returncode == 1 and not state.exists()
    assert os.path.exists("/run/ctr") == existed


def test_bad_command_line(root: Path) -> None:
    """Bad options: exit 2, one line."""
    cases = [["--memory", "lots"], ["--veth", "x" * 16], ["--cgroup", "../x"],
             ["-v", "/nonexistent-path:/x"], ["-v", "/tmp:relative"], ["--cgroupfs", "v3"],
             ["--ip", "10.0.0.1/24"], ["--propagation", "shared"]]
    for opts in cases:
        p = subprocess.run([str(ct.CTR), "run", *opts, str(root), "/bin/true"],
                           capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("ctr: "), \
            (opts, p.stderr)


def test_delete_twice_and_reused_pid(make: Make) -> None:
    """delete kills only the task the state names (pid and start time):
    after the container is gone, a second delete of a copy of its state
    kills nothing and succeeds."""
    c = make()
    wait_service(c)
    copy = c.dir / "copy.state"
    copy.write_text(c.state.read_text())
    c.delete()
    p = c.ctr("delete", "--state", str(copy), c.name)
    assert p.returncode == 0 and not copy.exists(), p.stderr


# ------------------------------------------------------------------ criu

def snapshot(c: ct.Container) -> list[tuple[int, str, str]]:
    """The container's tasks as they see themselves: (pid inside, state,
    comm), sorted."""
    out = []
    for p in c.tasks():
        st = zdtm.proc_state(p) or "?"
        comm = Path(f"/proc/{p}/comm").read_text().strip()
        out.append((zdtm.ns_pid(p), "S" if st in "RS" else st, comm))
    return sorted(out)


def test_criu_dump_refused(make: Make, tmp_path: Path) -> None:
    """A TCP connection of the container's init (without --tcp-established): `criu dump
    -t INIT` of the container is refused with one Error line naming the
    task, the fd and the socket; no images; the container runs on as it was
    (every task, not stopped, not traced, counting, answering), its
    network unlocked."""
    zdtm.need_criu()
    c = make(cmd=SERVICES["refused"])
    wait_service(c)
    before = snapshot(c)
    _, served = ask(c)
    img = tmp_path / "img"
    img.mkdir()
    res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img),
                                         "-o", "dump.log", "-v4"], img / "dump.log")
    errs = zdtm.error_lines(res.stderr)
    assert len(errs) == 1, res.describe()
    assert ct.later_refusal(res) and "127.0.0.1:7000" in errs[0], res.describe()
    assert any(f"Task {t}:" in errs[0] for t in c.tasks()), errs[0]
    assert not (img / "inventory.img").exists()
    assert snapshot(c) == before
    for t in c.tasks():
        assert zdtm.tracer_pid(t) == 0 and (zdtm.proc_state(t) or "?") not in "tT"
    assert counting(c) and ask(c)[1] == served + 1
    nft = ct.nsenter(c.pid, "n", "nft", "list", "tables")
    assert nft.returncode == 0 and "criu_lock" not in nft.stdout, \
        f"the container's network stayed locked: {nft.stdout}{nft.stderr}"


def mount_view(pid: int) -> list[tuple[str, str, str, str]]:
    """The container's mounts as a restore must rebuild them: (mountpoint,
    fstype, mount options, super options), in order, without ids."""
    return [(m[0], m[3], m[2], m[5]) for m in ct.read_mountinfo(pid)]


# The container's init: the counter alone, or with the server on its
# listening unix socket. The counter on the /dev/shm tmpfs tells a
# restore from a restart.
SERVICES = {
    "counter": ["/usr/bin/ctr-service", "--socket", "none"],
    "server": ["/usr/bin/ctr-service"],
    # the server, and a TCP connection that criu refuses without --tcp-established
    "refused": ["/usr/bin/ctr-service", "--tcp", "7000"],
    # the counter answering on a UDP socket bound to the veth's address
    # (test_round_trip_full's), shared by the init and the counter
    "udp": ["/usr/bin/ctr-service", "--socket", "none", "--udp", "10.213.8.2:7001"],
}


def ask_udp(pid: int) -> int:
    """The count the counter of container PID answers a datagram to its
    UDP socket with (sent from inside its network namespace)."""
    code = ("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            "s.settimeout(5); s.sendto(b'?', ('10.213.8.2', 7001)); print(s.recv(64).decode())")
    res = ct.nsenter(pid, "n", sys.executable, "-c", code)
    words = res.stdout.split()
    assert res.returncode == 0 and len(words) == 2 and words[0] == "count", \
        f"no answer on the container's UDP socket: {res.stdout}{res.stderr}"
    return int(words[1])


def round_trip(c: ct.Container, tmp_path: Path, root: Path, dump_opts: list[str],
               restore_opts: list[str]) -> int:
    """Dump the running service container, tear it down, restore it with
    --root: returns the restored init's pid. Skips while criu refuses what a
    later issue brings (ct.LATER), leaving the container running."""
    server = c.cmd == SERVICES["server"]
    if server:
        wait_service(c)
    else:
        wait_for("the counter", lambda: count(c) > 0)
    before, mounts = snapshot(c), mount_view(c.pid)
    n0, s0 = ask(c) if server else (count(c), 0)
    img = tmp_path / "img"
    img.mkdir()
    res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img),
                                         "-o", "dump.log", "-v4", *dump_opts],
                      img / "dump.log")
    line = ct.later_refusal(res)
    if line:
        assert c.alive() and counting(c), "the container stopped after a refused dump"
        assert snapshot(c) == before
        pytest.skip(line)
    assert res.returncode == 0, res.describe()
    left = ct.reap_until_gone(c.tasks())
    assert not left, f"tasks of the dumped container still run: {left}"
    c.delete(keep_state=True)           # its cgroups and veth, as a new host has none
    time.sleep(zdtm.GAP)
    pidfile = img / "restore.pid"
    res = ct.run_criu(tmp_path, "restore", ["restore", "-D", str(img), "-d", "--root",
                                            str(root), "--pidfile", str(pidfile),
                                            "-o", "restore.log", "-v4", *restore_opts],
                      img / "restore.log")
    assert res.returncode == 0, res.describe()
    c.pid = int(pidfile.read_text())
    c.read_ns()
    for kind in ct.NS_KINDS:
        assert c.ns[kind] != ct.ns_id(os.getpid(), kind), kind
    assert snapshot(c) == before
    assert mount_view(c.pid) == mounts
    if server:
        n1, s1 = ask(c)
        assert s1 == s0 + 1, f"the server restarted: served {s1} after {s0}"
    else:
        n1 = count(c)
    assert n1 >= n0, f"the counter restarted: {n1} after {n0}"
    assert n1 < n0 + 1000, f"the counter restarted? {n0} -> {n1}"
    assert counting(c)
    return c.pid


@pytest.mark.parametrize("service", ["counter", "server"])
def test_round_trip(make: Make, tmp_path: Path, root: Path, service: str) -> None:
    """The container of runc's default spec (pid, mount, network, ipc, uts
    and cgroup namespaces, mounts, root) is dumped, torn down, restored
    with --root: the same tasks (pids inside), the same mounts, the counter
    (and the server) go on where they were; deleting it afterwards leaves
    nothing."""
    zdtm.need_criu()
    c = make([], SERVICES[service])
    pid = round_trip(c, tmp_path, root, [], [])
    c.delete(pid=pid)
    assert not c.leftovers([])


@pytest.mark.parametrize("service", ["counter", "server", "udp"])
def test_round_trip_full(make: Make, tmp_path: Path, root: Path, service: str) -> None:
    """With cgroups and limits (--manage-cgroups), a veth with addresses
    (its outside end named by --external veth[]) and a volume (an
    external mount): all back as they were after the restore; with "udp",
    the counter's UDP socket bound to the veth's address answers again."""
    zdtm.need_criu()
    data = tmp_path / "data"
    data.mkdir()
    host = f"{TAG}r"
    c = make(cgroup_opts("rt", "--memory", "64m", "--pids", "50") +
             ["--veth", host, "--ip", "10.213.8.2/24", "-v", f"{data}:/mnt/data"],
             SERVICES[service])
    dirs = c.state_entries("cgroup")
    limits = {f"{d}/{f}": Path(d, f).read_text() for d in dirs
              for f in ("memory.limit_in_bytes", "memory.max", "pids.max")
              if os.path.exists(f"{d}/{f}")}
    assert limits, f"no limit in the container's cgroups {dirs}"
    n0 = ask_udp(c.pid) if service == "udp" else 0
    pid = round_trip(c, tmp_path, root,
                     ["--manage-cgroups", "--external", "mnt[/mnt/data]:data"],
                     ["--manage-cgroups", "--external", f"veth[eth0]:{host}",
                      "--external", f"mnt[data]:{data}"])
    for d in dirs:
        assert str(pid) in Path(d, "cgroup.procs").read_text().split(), d
    for f, v in limits.items():
        assert Path(f).read_text() == v, f
    assert "10.213.8.2/24" in ct.nsenter(pid, "n", "ip", "-o", "addr").stdout
    if service == "udp":
        assert ask_udp(pid) > n0, "the UDP answer's count did not go on"
    (data / "late").write_text("after the restore\n")
    assert c.path("/mnt/data/late").read_text() == "after the restore\n"
    c.delete(pid=pid)
    assert not c.leftovers(dirs, host)


def userns_of(pid: int, kind: str) -> int:
    """The inode of the user namespace owning namespace KIND of task PID."""
    NS_GET_USERNS = 0xb701
    fd = os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY)
    try:
        owner = fcntl.ioctl(fd, NS_GET_USERNS)
    finally:
        os.close(fd)
    try:
        return os.fstat(owner).st_ino
    finally:
        os.close(owner)


@pytest.mark.parametrize("service", ["counter", "server"])
def test_round_trip_userns(make: Make, tmp_path: Path, open_root: Path,
                           service: str) -> None:
    """A container in a user namespace of its own (ctr --userns: root
    inside is 100000 outside) in cgroups of its own, its device nodes bound
    from the host (external mounts, marked by --external mnt[]): after the
    restore the same maps, the same ids as the host sees them, every
    namespace owned by the user namespace, the service going on."""
    zdtm.need_criu()
    c = make(["--userns"] + cgroup_opts("un", "--pids", "40"), SERVICES[service],
             start=False)
    c.root = open_root
    # the service's socket goes there: the mapped root's (a copy of the rootfs)
    os.chown(open_root / "run", 100000, 100000)
    c.start()
    before = {f: Path(f"/proc/{c.pid}/{f}").read_text() for f in ("uid_map", "gid_map",
                                                                  "setgroups")}
    pid = round_trip(c, tmp_path, open_root, ["--external", "mnt[]"], [])
    assert {f: Path(f"/proc/{pid}/{f}").read_text() for f in before} == before
    assert ct.ns_id(pid, "user") != ct.ns_id(os.getpid(), "user")
    for kind in ct.NS_KINDS:
        assert userns_of(pid, kind) == os.stat(f"/proc/{pid}/ns/user").st_ino, kind
    uid = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
           if line.startswith("Uid:")][0].split()
    assert uid[1] == "100000", uid
    for d in c.state_entries("cgroup"):
        assert str(pid) in Path(d, "cgroup.procs").read_text().split(), d
    c.delete(pid=pid)


def freezer_of(c: ct.Container, kind: str) -> Optional[str]:
    """The container's cgroup directory of the v1 freezer, or of the
    unified hierarchy (cgroup.freeze), if it has one."""
    for d in c.state_entries("cgroup"):
        if os.path.exists(f"{d}/freezer.state" if kind == "v1" else f"{d}/cgroup.freeze"):
            return d
    return None


def cgroup_frozen(d: str) -> bool:
    if os.path.exists(f"{d}/freezer.state"):
        return Path(d, "freezer.state").read_text().strip() != "THAWED"
    return "frozen 1" in Path(d, "cgroup.events").read_text().splitlines()


@contextlib.contextmanager
def thawed_after(d: str) -> Iterator[None]:
    """Thaws cgroup @d at the end, whatever happened: a container left
    frozen by a failing test can't be traced away nor killed (v1)."""
    try:
        yield
    finally:
        if cgroup_frozen(d):
            if os.path.exists(f"{d}/freezer.state"):
                Path(d, "freezer.state").write_text("THAWED")
            else:
                Path(d, "cgroup.freeze").write_text("0")


@contextlib.contextmanager
def traced(pid: int) -> Iterator[None]:
    """Task @pid traced by strace, which criu refuses (it can't seize it)."""
    p = subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-p", str(pid)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for("strace to attach", lambda: zdtm.tracer_pid(pid) == p.pid)
        yield
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.mark.parametrize("why", ["socket", "traced"])
@pytest.mark.parametrize("kind", ["v1", "v2"])
def test_criu_dump_refused_thawed(make: Make, tmp_path: Path, kind: str, why: str) -> None:
    """--freeze-cgroup on the container's cgroup (v1 freezer.state, v2
    cgroup.freeze), and a dump that fails: while the cgroup is frozen, the
    init traced by strace can't be seized; once criu holds the tree and
    thawed it, the init's TCP connection is refused (no --tcp-established). Either
    way the cgroup is thawed, and the container counts (and answers) as
    before, its network unlocked."""
    zdtm.need_criu()
    if why == "traced" and not shutil.which("strace"):
        pytest.skip("no strace here")
    c = make(cgroup_opts(f"fz{kind}"), SERVICES["refused" if why == "socket" else "counter"])
    d = freezer_of(c, kind)
    if not d:
        pytest.skip(f"no {kind} freezer for the container's cgroup here")
    if why == "socket":
        wait_service(c)
    wait_for("the counter", lambda: count(c) > 0)
    before = snapshot(c)
    served = ask(c)[1] if why == "socket" else 0
    img = tmp_path / "img"
    img.mkdir()
    with contextlib.ExitStack() as stack:
        stack.enter_context(thawed_after(d))
        if why == "traced":
            stack.enter_context(traced(c.pid))
        res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img), "-o",
                                             "dump.log", "-v4", "--freeze-cgroup", d],
                          img / "dump.log")
        errs = zdtm.error_lines(res.stderr)
        assert len(errs) == 1, res.describe()
        assert ct.later_refusal(res) if why == "socket" else \
            f"Task {c.pid}: traced by " in errs[0], errs
        assert f"Froze cgroup {d} " in (img / "dump.log").read_text(), "not frozen"
        assert not cgroup_frozen(d), f"the failed dump left {d} frozen"
        assert counting(c), "the container does not count"
    assert snapshot(c) == before
    for t in c.tasks():
        assert zdtm.tracer_pid(t) == 0 and (zdtm.proc_state(t) or "?") not in "tTD"
    assert counting(c) and (why != "socket" or ask(c)[1] == served + 1)
    nft = ct.nsenter(c.pid, "n", "nft", "list", "tables")
    assert nft.returncode == 0 and "criu_lock" not in nft.stdout, nft.stdout


def user_namespaces_mapping(first: int) -> list[int]:
    """The tasks of the host in a user namespace whose uid_map maps 0 to
    host uid @first."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and \
                    (p / "uid_map").read_text().split()[:2] == ["0", str(first)]:
                out.append(int(p.name))
        except OSError:
            pass
    return out


def test_failed_restore_leaves_nothing(make: Make, tmp_path: Path, open_root: Path) -> None:
    """A container in a user namespace of its own (a map of this test's
    own), in cgroups of its own, with a veth: its restore fails once the
    user namespace, its maps, the cgroups and the mount tree are made (the
    service's binary is gone from the new root; the veth comes later, when
    every task exists: test_net fails restores after it). One Error line;
    no task left, so no user namespace; no cgroup, no veth (nor,
    hoststate, a mount); the images as they were."""
    zdtm.need_criu()
    first = 300000 + (os.getpid() % 1000) * 65536
    host = f"{TAG}f"
    idmap = f"0:{first}:65536"
    c = make(["--userns", "--uidmap", idmap, "--gidmap", idmap, "--veth", host,
              "--ip", "10.213.9.2/24"] + cgroup_opts("ff", "--pids", "30"),
             SERVICES["counter"], start=False)
    c.root = open_root
    c.start()
    wait_for("the counter", lambda: count(c) > 0)
    assert user_namespaces_mapping(first) == c.tasks(), "the container's maps are not seen"
    dirs = c.state_entries("cgroup")
    assert dirs, "the container has no cgroup"
    img = tmp_path / "img"
    img.mkdir()
    res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img),
                                         "-o", "dump.log", "-v4", "--external", "mnt[]"],
                      img / "dump.log")
    assert res.returncode == 0, res.describe()
    assert not ct.reap_until_gone(c.tasks())
    c.delete(keep_state=True)
    sums = {f.name: f.read_bytes() for f in img.iterdir() if f.suffix == ".img"}
    (open_root / "usr/bin/ctr-service").unlink()
    res = ct.run_criu(tmp_path, "restore", ["restore", "-D", str(img), "-d", "--root",
                                            str(open_root), "--manage-cgroups",
                                            "--external", f"veth[eth0]:{host}",
                                            "-o", "restore.log", "-v4"],
                      img / "restore.log")
    errs = zdtm.error_lines(res.stderr)
    assert res.returncode != 0 and len(errs) == 1 and "ctr-service" in errs[0], \
        res.describe()
    log = (img / "restore.log").read_text()
    assert "Created cgroup" in log and "its user namespace has its maps" in log, \
        "the restore failed before it made the cgroups and the user namespace"
    zdtm.reap_leftovers()
    assert children(os.getpid()) == [], "the failed restore left tasks behind"
    assert user_namespaces_mapping(first) == [], "a task is left in the user namespace"
    # the state file is ctr's, kept on purpose by delete(keep_state=True)
    assert not [x for x in c.leftovers(dirs, host) if not x.startswith("state file")]
    assert {f.name: f.read_bytes() for f in img.iterdir() if f.suffix == ".img"} == sums


# ----------------------------------------------- criu: the mount namespace alone

# The host's network and cgroup namespaces (ctr --share): the container's
# own pid, mount, ipc and uts namespaces, its root and every mount of runc's
# default spec, checkpointed by themselves; no listening socket (a piece of
# state of its own): the counter on the /dev/shm tmpfs tells a restore from
# a restart.
MNT_ONLY = ["--share", "net,cgroup"]
COUNTER = SERVICES["counter"]


def fds_on_own_mounts(pid: int, init: int = 0) -> list[str]:
    """The fds of a task that are files on a mount of the host's: a
    container's are all on its own (test_detached_stdio), or on its
    init's (a task in a nested mount namespace, files opened before)."""
    ids = {int(line.split()[0]) for p in (pid, init or pid) for line in
           Path(f"/proc/{p}/mountinfo").read_text().splitlines()}
    return [f"{fd} {target} (mount {mnt})" for fd, (target, mnt) in fd_mounts(pid).items()
            if target.startswith("/") and mnt not in ids]


def mnt_dump(c: ct.Container, tmp_path: Path, *opts: str) -> tuple[Path, zdtm.CriuResult]:
    img = tmp_path / "img"
    img.mkdir(exist_ok=True)
    res = ct.run_criu(tmp_path, "dump", ["dump", "-t", str(c.pid), "-D", str(img),
                                         "-o", "dump.log", "-v4", *opts], img / "dump.log")
    return img, res


def mnt_restore(c: ct.Container, tmp_path: Path, img: Path, root: Path,
                *opts: str) -> zdtm.CriuResult:
    pidfile = img / "restore.pid"
    res = ct.run_criu(tmp_path, "restore", ["restore", "-D", str(img), "-d", "--root",
                                            str(root), "--pidfile", str(pidfile),
                                            "-o", "restore.log", "-v4", *opts],
                      img / "restore.log")
    if res.returncode == 0:
        c.pid = int(pidfile.read_text())
        c.read_ns()
    return res


def mnt_round_trip(c: ct.Container, tmp_path: Path, dump_opts: list[str],
                   restore_opts: list[str],
                   between: Optional[Callable[[], object]] = None) -> None:
    """Dump the counting container, tear it down, restore it on a fresh copy
    of the rootfs: the same tasks, the same mounts in the same order with
    the same options, every fd on its own mounts, the counter going on."""
    wait_for("the counter", lambda: count(c) > 0)
    before, mounts = snapshot(c), mount_view(c.pid)
    img, res = mnt_dump(c, tmp_path, *dump_opts)
    assert res.returncode == 0, res.describe()
    n0 = count(c)
    assert not ct.reap_until_gone(c.tasks()), "the dumped container still runs"
    c.delete(keep_state=True)
    if between:
        between()
    fresh = ct.copy_rootfs(tmp_path / "fresh-root")
    res = mnt_restore(c, tmp_path, img, fresh, *restore_opts)
    assert res.returncode == 0, res.describe()
    for kind in ("pid", "mnt", "ipc", "uts"):
        assert c.ns[kind] != ct.ns_id(os.getpid(), kind), kind
    assert os.stat(f"/proc/{c.pid}/root").st_ino == os.stat(fresh).st_ino
    assert snapshot(c) == before
    assert mount_view(c.pid) == mounts
    for t in c.tasks():
        assert not fds_on_own_mounts(t, c.pid), (t, fds_on_own_mounts(t, c.pid))
    assert count(c) >= n0 and counting(c), "the counter does not go on"
    assert count(c) < n0 + 1000, f"the counter restarted? {n0} -> {count(c)}"


def nested_tasks(c: ct.Container) -> list[int]:
    """The container's tasks in a mount namespace other than its init's."""
    return [t for t in c.tasks() if ct.ns_id(t, "mnt") != ct.ns_id(c.pid, "mnt")]


def private_count(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/root/tmp/count").read_text())
    except (OSError, ValueError):
        return 0


def test_mnt_round_trip_private_tmp(make: Make, tmp_path: Path) -> None:
    """The counter has a /tmp of its own (ctr-service --private-tmp: a
    nested mount namespace, all slaves, a tmpfs on /tmp, as systemd's
    PrivateTmp): dumped with no option, restored with --root; the counter
    is in a namespace of its own again, with the same mounts, its count in
    its /tmp goes on, and the container's /tmp never sees it."""
    zdtm.need_criu()
    c = make(MNT_ONLY, COUNTER + ["--private-tmp"])
    wait_for("the private count", lambda: len(nested_tasks(c)) == 1 and
             private_count(nested_tasks(c)[0]) > 0)
    kid = nested_tasks(c)[0]
    mounts, n0 = mount_view(kid), private_count(kid)
    assert ("/tmp", "tmpfs") in [(m[0], m[1]) for m in mounts]
    assert not c.path("/tmp/count").exists()
    mnt_round_trip(c, tmp_path, [], [])
    assert len(nested_tasks(c)) == 1, "the counter is not in a namespace of its own"
    kid = nested_tasks(c)[0]
    assert mount_view(kid) == mounts
    assert private_count(kid) >= n0
    wait_for("the private count to go on", lambda: private_count(kid) > n0 + 1)
    assert not c.path("/tmp/count").exists(), "the private /tmp shows in the container's"
    c.delete(pid=c.pid)
    assert not c.leftovers([])


def test_mnt_round_trip(make: Make, tmp_path: Path) -> None:
    """runc's default mounts (proc, the /dev tmpfs and its nodes, devpts,
    /dev/shm, mqueue, read-only sysfs and cgroup hierarchies, masked and
    read-only paths) and the root: dumped with no option, restored with
    --root on a fresh copy of the rootfs; the counter on /dev/shm goes on."""
    zdtm.need_criu()
    c = make(MNT_ONLY, COUNTER)
    mnt_round_trip(c, tmp_path, [], [])
    c.delete(pid=c.pid)
    assert not c.leftovers([])


def test_lsm_mount_context_refused(make: Make, tmp_path: Path) -> None:
    """--lsm-mount-context where no SELinux runs: one line says so before
    anything is made, the images stay as they were, and the same images
    then restore without the option."""
    zdtm.need_criu()
    if Path("/sys/fs/selinux/enforce").exists():
        pytest.skip("SELinux runs here: --lsm-mount-context applies")
    c = make(MNT_ONLY, COUNTER)
    wait_for("the counter", lambda: count(c) > 0)
    img, res = mnt_dump(c, tmp_path)
    assert res.returncode == 0, res.describe()
    assert not ct.reap_until_gone(c.tasks()), "the dumped container still runs"
    c.delete(keep_state=True)
    fresh = ct.copy_rootfs(tmp_path / "fresh-root")
    images = {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")}
    res = mnt_restore(c, tmp_path, img, fresh, "--lsm-mount-context",
                      "system_u:object_r:container_file_t:s0:c1,c2")
    errs = zdtm.error_lines(res.stderr)
    assert res.returncode > 0 and len(errs) == 1, res.describe()
    assert "--lsm-mount-context" in errs[0] and "SELinux" in errs[0], errs[0]
    assert {k: v for k, v in zdtm.hash_tree(img).items() if k.endswith(".img")} == images
    res = mnt_restore(c, tmp_path, img, fresh)
    assert res.returncode == 0, res.describe()
    assert counting(c), "the counter does not go on"
    c.delete(pid=c.pid)
    assert not c.leftovers([])


@pytest.mark.parametrize("how", ["named", "auto"])
def test_mnt_round_trip_volume(make: Make, tmp_path: Path, how: str) -> None:
    """A volume (a host directory bound in) and a host file bound read-only:
    external mounts, named by --external mnt[POINT]:KEY at the dump and
    mnt[KEY]:PATH at the restore, or all marked by --external mnt[] and
    bound from the same paths again; after the restore they are the host's
    again, read-write and read-only as they were."""
    zdtm.need_criu()
    data, conf = tmp_path / "data", tmp_path / "conf"
    data.mkdir()
    conf.write_text("x=1\n")
    c = make(MNT_ONLY + ["-v", f"{data}:/mnt/data", "-v", f"{conf}:/etc/conf:ro"], COUNTER)
    moved = tmp_path / "data2" if how == "named" else data
    if how == "named":
        # the volume is somewhere else on the new host: the key says where
        dump = ["--external", "mnt[/mnt/data]:data", "--external", "mnt[/etc/conf]:conf"]
        restore = ["--external", f"mnt[data]:{moved}", "--ext-mount-map", f"conf:{conf}"]
    else:
        dump, restore = ["--external", "mnt[]"], []
    wait_for("the counter", lambda: count(c) > 0)
    (data / "old").write_text("before\n")
    mnt_round_trip(c, tmp_path, dump, restore,
                   (lambda: data.rename(moved)) if how == "named" else None)
    (moved / "late").write_text("after the restore\n")
    assert c.path("/mnt/data/late").read_text() == "after the restore\n"
    assert c.path("/mnt/data/old").read_text() == "before\n"
    assert c.path("/etc/conf").read_text() == "x=1\n"
    by = mounts_by_point(c.pid)
    assert "ro" in by["/etc/conf"][2].split(",") and "rw" in by["/mnt/data"][2].split(",")
    c.delete(pid=c.pid)
    assert not c.leftovers([])


def test_mnt_unnamed_volume_refused(make: Make, tmp_path: Path) -> None:
    """A host directory bound in without --external: the dump is refused in
    one Error line naming the mount and the option to use; the container
    runs on, counting, and no checkpoint is left."""
    zdtm.need_criu()
    data = tmp_path / "data"
    data.mkdir()
    c = make(MNT_ONLY + ["-v", f"{data}:/mnt/data"], COUNTER)
    wait_for("the counter", lambda: count(c) > 0)
    before = snapshot(c)
    img, res = mnt_dump(c, tmp_path)
    errs = zdtm.error_lines(res.stderr)
    assert res.returncode != 0 and len(errs) == 1, res.describe()
    assert "/mnt/data" in errs[0] and "--external mnt[/mnt/data]:KEY" in errs[0], errs[0]
    assert str(data) in errs[0], errs[0]
    assert not (img / "inventory.img").exists()
    assert snapshot(c) == before and counting(c)
    for t in c.tasks():
        assert zdtm.tracer_pid(t) == 0


def test_mnt_unsupported_refused(make: Make, tmp_path: Path) -> None:
    """A filesystem criu can't make anew (binfmt_misc here, mounted in the
    container by its init): refused by name, the container untouched."""
    zdtm.need_criu()
    c = make(MNT_ONLY, ["/bin/sh", "-c", "mount -t binfmt_misc none /mnt && "
                        "exec /usr/bin/ctr-service --socket none"])
    wait_for("the counter", lambda: count(c) > 0)
    if "/mnt" not in mounts_by_point(c.pid):
        pytest.skip("binfmt_misc can't be mounted here")
    before = snapshot(c)
    img, res = mnt_dump(c, tmp_path)
    errs = zdtm.error_lines(res.stderr)
    assert res.returncode != 0 and len(errs) == 1, res.describe()
    assert "binfmt_misc" in errs[0] and "/mnt" in errs[0], errs[0]
    assert snapshot(c) == before and counting(c)


@pytest.mark.parametrize("why", ["root", "external"])
def test_mnt_failed_restore_leaves_nothing(make: Make, tmp_path: Path, why: str) -> None:
    """A restore that fails while the mount tree is built (a --root without
    the mount points; an external mount from a path that is not there):
    one Error line, no task left, nothing mounted anywhere (the
    host_untouched fixture compares the host's mounts), the images as they
    were."""
    zdtm.need_criu()
    data = tmp_path / "data"
    data.mkdir()
    c = make(MNT_ONLY + ["-v", f"{data}:/mnt/data"], COUNTER)
    wait_for("the counter", lambda: count(c) > 0)
    img, res = mnt_dump(c, tmp_path, "--external", "mnt[/mnt/data]:data")
    assert res.returncode == 0, res.describe()
    assert not ct.reap_until_gone(c.tasks())
    c.delete(keep_state=True)
    sums = {f.name: f.read_bytes() for f in img.iterdir() if f.suffix == ".img"}
    empty = tmp_path / "empty-root"
    empty.mkdir()
    if why == "root":
        res = mnt_restore(c, tmp_path, img, empty, "--external", f"mnt[data]:{data}")
        words = "mount point"
    else:
        root = ct.copy_rootfs(tmp_path / "fresh-root")
        res = mnt_restore(c, tmp_path, img, root, "--external", "mnt[data]:/nonexistent")
        words = "/nonexistent"
    errs = zdtm.error_lines(res.stderr)
    assert res.returncode != 0 and len(errs) == 1 and words in errs[0], res.describe()
    zdtm.reap_leftovers()
    assert children(os.getpid()) == [], "the failed restore left tasks behind"
    assert {f.name: f.read_bytes() for f in img.iterdir() if f.suffix == ".img"} == sums
