"""Containers for tests, made by ctr (contrib/container) without any
container runtime: the rootfs, starting and deleting a container, and what
the host looked like before (to prove a test left it as it found it).

Used by test_container.py (the container test: ctr itself, a service
inside, criu against it) and by nsflavour.py (the zdtm `ns` flavour).

Environment:
  CTR            the ctr binary (default BUILD_DIR/contrib/container/ctr)
  BUILD_DIR      meson's build directory (buildpaths.py)
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import buildpaths
import zdtm

BUILD_ROOT = buildpaths.build_dir()
CTR = Path(os.environ.get("CTR", str(BUILD_ROOT / "contrib" / "container" / "ctr")))
MKROOTFS = buildpaths.ROOT / "contrib" / "container" / "mkrootfs.sh"
NS_KINDS = ("pid", "mnt", "net", "ipc", "uts", "cgroup")

# What criu says today of a task in namespaces it can't dump yet.
NS_REFUSED = ("mount namespace", "network namespace", "user namespace", "cgroup namespace")
ISSUE12 = "criu does not dump mount/net/user/cgroup namespaces yet (issue 12)"

_rootfs: Optional[Path] = None


class ContainerError(AssertionError):
    pass


def available() -> Optional[str]:
    """None when containers can be made here, else why not."""
    if not CTR.exists():
        return f"ctr is not built at {CTR} (ninja -C build)"
    if os.geteuid() != 0:
        return "ctr needs root"
    return None


def cached_rootfs() -> Path:
    """The build's rootfs (mkrootfs.sh: busybox, ctr, ctr-service, the zdtm
    programs with their libraries), rebuilt only when an input changed."""
    global _rootfs
    if _rootfs is None:
        p = subprocess.run([str(MKROOTFS), "-b", str(BUILD_ROOT)], capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0:
            raise ContainerError(f"mkrootfs.sh failed: {p.stderr.strip()}")
        _rootfs = Path(p.stdout.strip().splitlines()[-1])
    return _rootfs


def copy_rootfs(dst: Path) -> Path:
    """A private copy of the rootfs: containers write to their root (their
    mount points, sockets, the ns flavour's work directories)."""
    src = cached_rootfs()
    p = subprocess.run(["cp", "-a", str(src), str(dst)], capture_output=True, text=True)
    if p.returncode != 0:
        raise ContainerError(f"cp -a {src} {dst}: {p.stderr.strip()}")
    return dst


def ns_id(pid: int, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def tasks_in_pidns(ns: str) -> list[int]:
    """Every task (zombies included) whose pid namespace is ns."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{name}/ns/pid") == ns:
                out.append(int(name))
        except OSError:
            continue
    return out


def read_mountinfo(pid: int) -> list[list[str]]:
    """/proc/PID/mountinfo, each line as [mountpoint, root, mount options,
    fstype, source, super options], in order."""
    out = []
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        pre, post = line.split(" - ", 1)
        f = pre.split()
        fstype, source, sopts = (post.split() + [""])[:3]
        out.append([f[4], f[3], f[5], fstype, source, sopts])
    return out


def cgroup_mounts() -> list[tuple[str, str]]:
    """(mount point, fstype) of the host's cgroup hierarchies."""
    out = []
    for m in read_mountinfo(os.getpid()):
        if m[3] in ("cgroup", "cgroup2") and (m[0], m[3]) not in out:
            out.append((m[0], m[3]))
    return out


@dataclass
class HostView:
    """What a container may leave on the host beyond what hoststate.py
    checks around every test (mounts, UTS names, IPC sysctls, the runner's
    cgroup): network links and cgroup directories.  Taken before a test
    and compared after it, for the names this session gives them only:
    other sessions make and remove their own meanwhile."""
    links: list[str]
    cgroups: list[str]

    @classmethod
    def take(cls) -> "HostView":
        cgs: list[str] = []
        for mnt, _ in cgroup_mounts():
            for dirpath, dirnames, _files in os.walk(mnt):
                cgs += [os.path.join(dirpath, d) for d in dirnames]
        return cls(sorted(os.listdir("/sys/class/net")), sorted(cgs))

    def diff(self, now: "HostView", prefixes: tuple[str, ...]) -> str:
        out = []
        for what in ("links", "cgroups"):
            a, b = getattr(self, what), getattr(now, what)
            new = [x for x in b if x not in a and any(p in x for p in prefixes)]
            gone = [x for x in a if x not in b and any(p in x for p in prefixes)]
            if new or gone:
                out.append(f"{what}: new {new}, gone {gone}")
        return "\n".join(out)


@dataclass
class Container:
    """One container started by `ctr run -d`, in work directory `dir`."""
    dir: Path
    root: Path
    name: str
    opts: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=lambda: ["/usr/bin/ctr-service"])
    pid: int = 0
    ns: dict[str, str] = field(default_factory=dict)
    calls: int = 0

    @property
    def state(self) -> Path:
        return self.dir / f"{self.name}.state"

    def ctr(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Runs ctr with its output in files: a detached container would
        hold a pipe open for ever."""
        self.calls += 1
        out = self.dir / f"ctr{self.calls}.out"
        err = self.dir / f"ctr{self.calls}.err"
        with open(out, "w") as o, open(err, "w") as e:
            rc = subprocess.run([str(CTR), *args], stdin=subprocess.DEVNULL, stdout=o,
                                stderr=e, timeout=timeout).returncode
        return subprocess.CompletedProcess(args, rc, out.read_text(), err.read_text())

    def run_args(self) -> list[str]:
        return ["run", "-d", "--name", self.name, "--state", str(self.state), *self.opts,
                str(self.root), "--", *self.cmd]

    def try_start(self) -> subprocess.CompletedProcess:
        p = self.ctr(*self.run_args())
        if p.returncode == 0:
            self.pid = int(p.stdout.strip())
            self.read_ns()
        return p

    def read_ns(self) -> None:
        """The init's namespaces (none when it has ended already)."""
        try:
            self.ns = {k: ns_id(self.pid, k) for k in NS_KINDS + ("user",)}
        except OSError:
            self.ns = {}

    def start(self) -> int:
        p = self.try_start()
        if p.returncode != 0:
            raise ContainerError(f"ctr {' '.join(self.run_args())}: exit {p.returncode}: "
                                 f"{p.stderr.strip()}")
        return self.pid

    def path(self, inside: str) -> Path:
        """A path of the container, from the host (through its init)."""
        return Path(f"/proc/{self.pid}/root{inside}")

    def alive(self) -> bool:
        st = zdtm.proc_state(self.pid) if self.pid else None
        return st is not None and st not in "ZX"

    def tasks(self) -> list[int]:
        return tasks_in_pidns(self.ns["pid"]) if self.ns else []

    def delete(self, pid: Optional[int] = None, keep_state: bool = False) -> None:
        args = ["delete", "--state", str(self.state)]
        if pid:
            args += ["--pid", str(pid)]
        if keep_state:
            args.append("--keep-state")
        p = self.ctr(*args, self.name)
        reap_until_gone(self.tasks())
        if p.returncode != 0:
            raise ContainerError(f"ctr delete {self.name}: exit {p.returncode}: "
                                 f"{p.stderr.strip()}")

    def state_entries(self, key: str) -> list[str]:
        if not self.state.exists():
            return []
        return [line.split(" ", 1)[1] for line in self.state.read_text().splitlines()
                if line.split(" ", 1)[0] == key]

    def leftovers(self, cgroups: list[str], veth: Optional[str] = None) -> list[str]:
        """What is still there of this container after its teardown."""
        left = []
        if self.ns:
            tasks = tasks_in_pidns(self.ns["pid"])
            if tasks:
                left.append(f"tasks of its pid namespace: {tasks}")
        left += [f"cgroup {c}" for c in cgroups if os.path.exists(c)]
        if veth and os.path.exists(f"/sys/class/net/{veth}"):
            left.append(f"veth {veth}")
        if self.state.exists():
            left.append(f"state file {self.state}")
        return left


def run_criu(workdir: Path, tag: str, args: list[str], log: Optional[Path] = None,
             timeout: float = zdtm.CRIU_TIMEOUT) -> zdtm.CriuResult:
    """criu ARGS with its stdout and stderr kept in workdir (TAG.stdout/err)."""
    outp, errp = workdir / f"{tag}.stdout", workdir / f"{tag}.stderr"
    cmd = [zdtm.CRIU, *args]
    with open(outp, "wb") as o, open(errp, "wb") as e:
        try:
            rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -999
    res = zdtm.CriuResult(cmd, rc, outp.read_text(errors="replace"),
                          errp.read_text(errors="replace"), log)
    if rc == -999:
        raise ContainerError(f"criu did not finish in {timeout} s\n{res.describe()}")
    return res


def namespace_refusal(res: zdtm.CriuResult) -> Optional[str]:
    """criu's Error line when it refused the dump for a namespace it does
    not support, else None: the way to know, by trying, that the container
    work of issue 12 has not landed yet."""
    if res.returncode == 0:
        return None
    for line in zdtm.error_lines(res.stderr):
        if any(w in line for w in NS_REFUSED):
            return line
    return None


# What criu refuses in a container that a later issue than 12 brings: words
# of its Error line -> the issue. A round trip that needs it skips with that
# line (found by trying: it runs for real the day criu does it).
LATER = {
    "--tcp-established": "TCP connections (--tcp-established) are issue 15",
}


def later_refusal(res: zdtm.CriuResult) -> Optional[str]:
    """'ISSUE: criu's Error line' when criu refused the dump for something
    a later issue brings, else None."""
    if res.returncode == 0:
        return None
    for line in zdtm.error_lines(res.stderr):
        for words, issue in LATER.items():
            if words in line:
                return f"{issue}: {line.split('; see ')[0]}"
    return None


def unknown_option(res: zdtm.CriuResult) -> Optional[str]:
    """criu's Error line when it does not know an option (or a form of
    --external) yet, else None."""
    if res.returncode == 0:
        return None
    for line in zdtm.error_lines(res.stderr):
        if "unknown option" in line or "unrecognized option" in line or \
                "unknown kind" in line:
            return line
    return None


def reap_until_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Waits for pids to be gone, reaping what got reparented to us (the
    session is a subreaper: a detached container's init is ours)."""
    deadline = time.monotonic() + timeout
    while True:
        zdtm.reap_leftovers()
        left = [p for p in pids if zdtm.proc_state(p) is not None]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.01)


def kill_tree(pids: list[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reap_until_gone(pids)


def nsenter(pid: int, kinds: str, *cmd: str) -> subprocess.CompletedProcess:
    """Runs a host command in some namespaces of the container (nsenter
    -n, -u, ...: never its mount namespace, whose binaries are its own)."""
    return subprocess.run(["nsenter", "-t", str(pid), *[f"-{k}" for k in kinds], *cmd],
                          capture_output=True, text=True, timeout=30)


def remove_tree(p: Path) -> None:
    shutil.rmtree(p, ignore_errors=True)
