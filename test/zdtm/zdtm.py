"""Runner library for the zdtm test suite.

A zdtm test program sets some state up, reports ready, waits for SIGTERM,
checks its state and writes a verdict. This module starts such programs,
checkpoints and restores them with criu in the ways the flavours describe,
checks what can be seen from outside (pid, memory map, file descriptors)
and collects the verdict. test_zdtm.py and test_errors.py drive it.

A program whose feature the machine lacks writes "SKIP: reason" and exits
with SKIP_EXIT before it is ready: the test is skipped with that reason.

Environment:
  CRIU            criu binary (default BUILD_DIR/criu/criu)
  ZDTM_BUILD      where the test programs are built (BUILD_DIR/test/zdtm)
  BUILD_DIR       meson's build directory (build, from the repository root)
  ZDTM_GAP        seconds between dump and restore (default 2)
  ZDTM_SELFCHECK  1: run only the "none" flavour, no criu at all
  ZDTM_KEEP       1: keep the work directories of passing runs too
  ZDTM_WORKDIR    where each session makes its zdtm.XXXX directory (/tmp)
  ZDTM_CRIU_TIMEOUT  seconds before a criu run counts as hung (60)
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, Optional, TypeVar

import pytest

import buildpaths
import vdsomaps
from reap import become_subreaper, is_child, proc_state, reap_leftovers, wait_gone

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"

CRIU = str(buildpaths.criu())
BUILD = buildpaths.zdtm_build()
GAP = float(os.environ.get("ZDTM_GAP", "2"))
SELFCHECK = os.environ.get("ZDTM_SELFCHECK") == "1"
KEEP = os.environ.get("ZDTM_KEEP") == "1"
WORKDIR = Path(os.environ.get("ZDTM_WORKDIR", tempfile.gettempdir()))

FLAVOURS = ["plain", "leave-running", "twice"]
READY_TIMEOUT = 20.0
EXIT_TIMEOUT = 20.0
CRIU_TIMEOUT = float(os.environ.get("ZDTM_CRIU_TIMEOUT", "60"))

SKIP_EXIT = 77          # lib/zdtm.h TEST_EXIT_SKIP


_session_dir: Optional[Path] = None


def session_dir() -> Path:
    """This session's own directory for the per-run directories, so that
    concurrent sessions never share (or clean up) each other's files."""
    global _session_dir
    if _session_dir is None:
        WORKDIR.mkdir(parents=True, exist_ok=True)
        _session_dir = Path(tempfile.mkdtemp(prefix="zdtm.", dir=WORKDIR))
    return _session_dir


def end_session() -> None:
    """Remove the session directory if no failed run was kept in it."""
    if _session_dir is not None:
        try:
            _session_dir.rmdir()
        except OSError:
            print(f"\nzdtm: work directories kept in {_session_dir}")


# Restored tasks are reparented to us when criu exits: reap them.
become_subreaper()


class ZdtmFailure(AssertionError):
    pass


@dataclass
class Desc:
    name: str
    flavors: list[str] = field(default_factory=lambda: list(FLAVOURS))
    dump_opts: list[str] = field(default_factory=list)
    restore_opts: list[str] = field(default_factory=list)
    restore_env: dict[str, str] = field(default_factory=dict)
    expect: str = "pass"
    args: list[str] = field(default_factory=list)
    pidns: bool = False     # run as the init of a pid namespace (--pidns)


def load_desc(name: str) -> Desc:
    path = STATIC / (name + ".desc")
    data = json.loads(path.read_text()) if path.exists() else {}
    known = {"flavors", "dump_opts", "restore_opts", "restore_env", "expect", "args",
             "doc", "pidns"}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}")
    data.pop("doc", None)
    return Desc(name=name, **data)


def all_descs() -> list[Desc]:
    return [load_desc(p.stem) for p in sorted(STATIC.glob("*.c"))]


# ---------------------------------------------------------------- /proc views

def tail(path: Path, lines: int = 40) -> str:
    try:
        data = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"<{path}: {e.strerror}>"
    return "\n".join(data[-lines:])


def tracer_pid(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def ns_pid(pid: int) -> int:
    """The pid of task pid in its own pid namespace (last of NSpid), 0 if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def is_shm_object(path: str) -> bool:
    """A shared memory object restore creates anew: its inode number can't
    be kept (shared anonymous memory, memfd, and a deleted file: a ghost,
    made again from the images)."""
    return path.startswith("/") and path.endswith(" (deleted)")


def is_pipe_or_socket(path: str) -> bool:
    """pipe:[INODE] or socket:[INODE]."""
    return path.startswith(("pipe:[", "socket:[")) and path.endswith("]")


def shm_label(labels: dict[str, str], ino: str) -> str:
    """The same object gets the same label, in order of first sight."""
    return labels.setdefault(ino, f"shm#{len(labels)}")


def own_filesystems(pid: int) -> dict[int, str]:
    """Mount id -> device of the mounts of the task's namespace whose
    filesystem the runner's namespace does not have (a tmpfs the test
    mounted in a mount namespace of its own): restore makes them anew, so
    their inode numbers (and device) are new too."""
    def devs(p: str) -> dict[int, str]:
        try:
            lines = Path(f"/proc/{p}/mountinfo").read_text().splitlines()
        except OSError:
            return {}
        return {int(w[0]): w[2] for w in (line.split() for line in lines)}
    def ppid(p: int) -> int:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("PPid:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def mntns(p: int) -> int:
        try:
            return os.stat(f"/proc/{p}/ns/mnt").st_ino
        except OSError:
            return -1

    ours = set(devs("self").values())
    # a chrooted task's mountinfo only shows the mounts under its root:
    # its ancestors show the rest (/dev of a container), those in the
    # namespaces its own was copied from too (a nested one's fds on them)
    theirs: dict[int, str] = {}
    p, own = pid, mntns(os.getpid())
    while p > 1 and mntns(p) not in (own, -1):
        theirs.update(devs(str(p)))
        p = ppid(p)
    return {i: d for i, d in theirs.items() if d not in ours}


def fs_label(labels: dict[str, str], dev: str, ino: str) -> str:
    """An inode of a filesystem made anew: the same one, the same label."""
    return labels.setdefault(f"{dev}/{ino}", f"newfs#{len(labels)}")


def read_maps(pid: int) -> list[str]:
    """/proc/PID/maps with adjacent VMAs that only differ in where a
    boundary lies merged, so that a different but equivalent split is not
    reported as a change, and the inode numbers of shared memory objects
    and mapped sockets replaced by labels that still tell which areas map the same one."""
    out: list[list[Any]] = []
    labels: dict[str, str] = {}
    new_devs = {"%02x:%02x" % tuple(int(x) for x in d.split(":"))
                for d in own_filesystems(pid).values()}
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        start, end = (int(x, 16) for x in parts[0].split("-"))
        perms, off, dev, ino = parts[1], int(parts[2], 16), parts[3], parts[4]
        path = parts[5] if len(parts) > 5 else ""
        if is_shm_object(path):
            ino = shm_label(labels, ino)
            # a ghost on a filesystem made anew (a container's tmpfs)
            dev = "new" if dev in new_devs else dev
        elif dev in new_devs:
            dev, ino = "new", fs_label(labels, dev, ino)
        elif is_pipe_or_socket(path):
            # a packet socket's rings: the socket is made anew
            ino = shm_label(labels, ino)
            path = path[:path.index("[")] + f"[{ino}]"
        if out:
            p = out[-1]
            anon = ino == "0"
            if (p[1] == start and p[2] == perms and p[4] == dev and p[5] == ino
                    and p[6] == path and (anon or p[3] + (p[1] - p[0]) == off)):
                p[1] = end
                continue
        out.append([start, end, perms, off, dev, ino, path])
    return [f"{s:x}-{e:x} {pm} {o:08x} {d} {i} {pa}".rstrip()
            for s, e, pm, o, d, i, pa in out]


def read_fds(pid: int) -> dict[int, str]:
    fds: dict[int, str] = {}
    labels: dict[str, str] = {}
    new_fs = own_filesystems(pid)
    base = Path(f"/proc/{pid}")
    for name in sorted(os.listdir(base / "fd"), key=int):
        fd = int(name)
        try:
            target = os.readlink(base / "fd" / name)
            info = dict(line.split(":", 1) for line in
                        (base / "fdinfo" / name).read_text().splitlines()
                        if ":" in line)
        except FileNotFoundError:
            continue
        if is_shm_object(target) and "ino" in info:
            info["ino"] = shm_label(labels, info["ino"].strip())
        mnt = int(info.get("mnt_id", "0").strip() or 0)
        if mnt in new_fs and "ino" in info:
            info["ino"] = fs_label(labels, new_fs[mnt], info["ino"].strip())
        if target == "anon_inode:[pidfd]" and "ino" in info:
            # pidfs gives each process an inode: a restored one has another
            info["ino"] = labels.setdefault(f"pidfd/{info['ino'].strip()}",
                                            f"pidfd#{len(labels)}")
        if is_pipe_or_socket(target):
            # made anew on restore, with a new inode: the label still
            # tells which fds are on the same one
            target = labels.setdefault(target, f"{target.split(':')[0]}#{len(labels)}")
            info.pop("ino", None)
        keep = " ".join(f"{k}={info[k].strip()}" for k in ("pos", "flags", "ino")
                        if k in info)
        fds[fd] = f"{target} {keep}"
    return fds


@dataclass
class Snapshot:
    maps: list[str]
    fds: dict[int, str]

    @classmethod
    def take(cls, pid: int) -> "Snapshot":
        return cls(read_maps(pid), read_fds(pid))

    def diff(self, other: "Snapshot") -> str:
        out = []
        if self.maps != other.maps:
            out.append("maps differ:\n" + "\n".join(difflib.unified_diff(
                self.maps, other.maps, "before", "now", lineterm="", n=1)))
        if self.fds != other.fds:
            lines = []
            for fd in sorted(set(self.fds) | set(other.fds)):
                a, b = self.fds.get(fd), other.fds.get(fd)
                if a != b:
                    lines.append(f"  fd {fd}: before: {a}\n  fd {fd}: now:    {b}")
            out.append("fds differ:\n" + "\n".join(lines))
        return "\n".join(out)


def hash_tree(d: Path) -> dict[str, tuple[str, int]]:
    """name -> (sha256, mtime_ns) of every file in d."""
    out = {}
    for p in sorted(d.iterdir()):
        if p.is_file():
            out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(),
                           p.stat().st_mtime_ns)
    return out


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "Error" in line]


# ---------------------------------------------------------------- one run

@dataclass
class CriuResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    log: Optional[Path]

    def describe(self) -> str:
        s = f"$ {' '.join(self.args)}\n=> exit {self.returncode}"
        if self.stdout.strip():
            s += f"\n--- stdout:\n{self.stdout.strip()[-2000:]}"
        if self.stderr.strip():
            s += f"\n--- stderr:\n{self.stderr.strip()[-2000:]}"
        if self.log is not None:
            s += f"\n--- tail of {self.log}:\n{tail(self.log)}"
        return s


RunT = TypeVar("RunT", bound="Run")


class Run:
    """One test program through one flavour, in its own directory.

    Use as a context manager: whatever happens, the task is killed and
    reaped on exit, and the directory is removed unless the run failed
    (or ZDTM_KEEP=1)."""

    # seconds the "none" flavour gives the program before it checks
    SETTLE = 0.0

    def __init__(self, name: str, flavour: str, extra: Optional[str] = None,
                 session_leader: bool = True, args: Optional[list[str]] = None,
                 gap: float = GAP, pidns: bool = False):
        self.name = name
        # --pidns: the program forks the test as the init of a pid namespace
        # and waits for it (the launcher); the dumped tree is that init's
        self.pidns = pidns
        self.launcher: Optional[subprocess.Popen[bytes]] = None
        self.flavour = flavour
        self.extra = extra
        self.session_leader = session_leader
        self.args = args or []
        self.gap = gap
        # commands the program and criu run under (nsenter, unshare: pid kept)
        self.start_prefix: list[str] = []
        self.criu_prefix: list[str] = []
        self.criu_fds: tuple[int, ...] = ()     # fds criu inherits (--inherit-fd)
        self.criu_stdin: Optional[int] = None   # criu's stdin (a terminal); else /dev/null
        self.dir = Path(tempfile.mkdtemp(prefix=f"{name}.{flavour}.", dir=session_dir()))
        self.out = self.dir / f"{name}.out"
        self.ready = self.dir / f"{name}.ready"
        self.log = self.dir / f"{name}.log"
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.pid = 0
        self.alive = False
        self.ours = False       # the task is our child (reapable)
        self.history: list[tuple[str, int]] = []
        self.problems: list[str] = []
        self.ncriu = 0
        self.failed = True
        # vDSO redirects the restores logged: the maps may show them
        self.redirects: list[vdsomaps.Redirect] = []

    # -- context
    def __enter__(self: RunT) -> RunT:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.kill()
        if self.launcher is not None:
            self.launcher.kill()
            self.launcher.wait()
            self.launcher = None
        if exc_type is None or issubclass(exc_type, pytest.skip.Exception):
            self.failed = False
        if not self.failed and not KEEP:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- reporting
    def note(self, msg: str) -> None:
        """Record a step; repeats of the last step are counted, not listed."""
        if self.history and self.history[-1][0] == msg:
            self.history[-1] = (msg, self.history[-1][1] + 1)
        else:
            self.history.append((msg, 1))

    def steps(self) -> str:
        return "; ".join(m if n == 1 else f"{m} (x{n})" for m, n in self.history)

    def fail(self, msg: str, *criu: CriuResult) -> NoReturn:
        parts = [f"{self.name} [{self.flavour}] pid {self.pid}: {msg}"]
        if self.problems:
            parts.append("--- earlier problems:\n" + "\n".join(self.problems))
        for c in criu:
            parts.append(c.describe())
        parts.append(f"--- steps: {self.steps()}")
        parts.append(f"--- tail of the test's log {self.log}:\n{tail(self.log, 20)}")
        parts.append(f"--- work dir: {self.dir}")
        raise ZdtmFailure("\n".join(parts))

    # -- the task
    def binary(self) -> Path:
        return BUILD / "static" / self.name

    def start(self) -> None:
        binary = self.binary()
        if not binary.exists():
            self.fail(f"test program {binary} not built (ninja -C build?)")
        cmd = self.start_prefix + [str(binary), "--outfile", str(self.out),
                                   "--readyfile", str(self.ready)]
        if self.extra:
            cmd += ["--extra", self.extra]
        if self.pidns:
            cmd.append("--pidns")
        cmd += self.args
        # an odd variable makes the environment block distinctive
        env = dict(os.environ, ZDTM_GAP=str(self.gap), ZDTM_ODD="a=b c\td\u00e9")
        fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self.proc = subprocess.Popen(
                cmd, cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                stdout=fd, stderr=fd, start_new_session=self.session_leader)
        finally:
            os.close(fd)
        self.pid = self.proc.pid
        self.alive = self.ours = True
        self.note("started")
        deadline = time.monotonic() + READY_TIMEOUT
        while not self.ready.exists():
            if self.proc.poll() is not None:
                self.alive = False
                self.skip_or_fail(self.proc.returncode)
            if time.monotonic() > deadline:
                self.fail("not ready in time")
            time.sleep(0.01)
        ready = int(self.ready.read_text())
        if self.pidns:
            if ready == self.pid or ns_pid(ready) != 1:
                self.fail(f"--pidns: task {ready} of the ready file is not the init "
                          "of a pid namespace")
            # the init is the launcher's child: we reap the launcher, which
            # relays the init's exit status
            self.launcher, self.proc, self.pid = self.proc, None, ready
            self.ours = False
            self.note(f"pid namespace init {ready}")
        elif ready != self.pid:
            self.fail("the ready file holds another pid")

    def verdict(self) -> str:
        try:
            return self.out.read_text().strip()
        except OSError:
            return "<no out file>"

    def skip_or_fail(self, rc: int) -> NoReturn:
        """The program exited before it was ready: skipped, when it says
        its feature is missing here (SKIP_EXIT and "SKIP: reason"), else
        failed."""
        verdict = self.verdict()
        skipped = verdict.startswith("SKIP: ")
        if rc == SKIP_EXIT and skipped:
            self.note(f"skipped: {verdict}")
            pytest.skip(f"{self.name}: {verdict[6:]}")
        if rc == SKIP_EXIT or skipped:
            self.fail(f"exit status {rc} with verdict {verdict!r}: a skip is both "
                      f"exit status {SKIP_EXIT} and \"SKIP: reason\"")
        self.fail(f"exited with {rc} before it was ready (verdict {verdict!r})")

    def snapshot(self) -> Snapshot:
        try:
            return Snapshot.take(self.pid)
        except OSError as e:
            self.fail(f"cannot read the task's /proc files: {e} "
                      f"(state {proc_state(self.pid)})")

    def record(self) -> None:
        """Note what check() compares besides the snapshot, once the
        program is ready: nothing for a single task (TreeRun: the tree)."""

    def check(self, what: str, snap: Snapshot) -> None:
        """All that must hold after a step of a flavour."""
        self.check_running(what, snap)

    def check_running(self, what: str, snap: Optional[Snapshot] = None) -> None:
        """The task must exist, be neither stopped nor traced, and look as in
        snap."""
        deadline = time.monotonic() + 3
        while True:
            state = proc_state(self.pid)
            tracer = tracer_pid(self.pid)
            if state is not None and state not in "TtZX" and tracer == 0:
                break
            if state is None or state in "ZX" or time.monotonic() > deadline:
                self.fail(f"{what}: the task is not running normally "
                          f"(state {state}, tracer {tracer})")
            time.sleep(0.02)
        if snap is not None:
            snap = Snapshot(vdsomaps.apply(snap.maps, self.redirects), snap.fds)
            # a task criu left on its way home (munmap, sigreturn) may not
            # have run yet on a busy machine: give it a moment
            d = snap.diff(self.snapshot())
            while d and time.monotonic() < deadline + 2:
                time.sleep(0.02)
                d = snap.diff(self.snapshot())
            if d:
                # keep going: the verdict tells more; finish() reports both
                self.problems.append(f"{what}: the task changed\n{d}")
                self.note(f"{what}: the task changed")

    def _wait(self, timeout: float) -> Optional[int]:
        """Reap the task; returns its wait status, or None on timeout."""
        # the program we started, or (only one of them is ever set) the
        # launcher of a pid namespace's first init, which relays its status
        p = self.proc
        if p is None and self.launcher is not None and not is_child(self.pid):
            p = self.launcher
        if p is not None:
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
            self.proc = self.launcher = None
            self.alive = False
            return rc
        got = wait_gone(self.pid, timeout)
        if got is not None:
            self.alive = False
        return got

    def kill(self) -> None:
        if not self.alive or not self.pid:
            return
        if self.session_leader:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._wait(10)
        if self.session_leader:
            reap_session(self.pid)
        self.alive = False

    def gone_after_dump(self, res: CriuResult) -> None:
        """A dump without --leave-running kills the task."""
        rc = self._wait(10)
        if rc is None:
            self.fail("the task still runs after a dump without --leave-running", res)
        if self.session_leader:
            left = reap_session(self.pid)
            if left:
                self.fail(f"processes of the dumped session still run: {left}", res)
        self.ours = False
        self.note(f"task gone after dump (status {rc})")

    # -- criu
    def criu(self, args: list[str], log: Optional[Path] = None,
             env: Optional[dict[str, str]] = None, timeout: float = CRIU_TIMEOUT) -> CriuResult:
        self.ncriu += 1
        outp = self.dir / f"criu{self.ncriu}.stdout"
        errp = self.dir / f"criu{self.ncriu}.stderr"
        cmd = self.criu_prefix + [CRIU] + args
        with open(outp, "wb") as o, open(errp, "wb") as e:
            try:
                stdin = subprocess.DEVNULL if self.criu_stdin is None else self.criu_stdin
                p = subprocess.run(cmd, stdin=stdin, stdout=o, stderr=e,
                                   pass_fds=self.criu_fds,
                                   env=env, timeout=timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = -999
            except OSError as err:
                self.fail(f"cannot run {CRIU}: {err}")
        res = CriuResult(cmd, rc, outp.read_text(errors="replace"),
                         errp.read_text(errors="replace"), log)
        if rc == -999:
            self.fail(f"criu did not finish in {timeout} s", res)
        self.note(f"criu {args[0]} -> {rc}")
        return res

    def imgdir(self, tag: str) -> Path:
        d = self.dir / tag
        d.mkdir(mode=0o700)
        os.chmod(d, 0o700)
        return d

    def dump_cmd(self, img: Path, opts: list[str]) -> list[str]:
        return ["dump", "-t", str(self.pid), "-D", str(img), "-o", "dump.log",
                "-v4"] + opts

    def dump(self, img: Path, opts: list[str] = [], leave_running: bool = False,
             env: Optional[dict[str, str]] = None) -> CriuResult:
        o = list(opts) + (["--leave-running"] if leave_running else [])
        return self.criu(self.dump_cmd(img, o), img / "dump.log", env=env)

    def dump_ok(self, img: Path, opts: list[str] = [], leave_running: bool = False) -> None:
        res = self.dump(img, opts, leave_running)
        if res.returncode != 0:
            self.fail("criu dump failed", res)
        if leave_running:
            self.note("dumped, left running")
        else:
            self.gone_after_dump(res)

    def restore(self, img: Path, opts: list[str] = [],
                env: Optional[dict[str, str]] = None) -> tuple[CriuResult, Path]:
        pidfile = img / "restore.pid"
        res = self.criu(["restore", "-D", str(img), "-d", "-o", "restore.log", "-v4",
                         "--pidfile", str(pidfile)] + list(opts), img / "restore.log",
                        env=env)
        return res, pidfile

    def skip_if_pid_taken(self, res: CriuResult) -> None:
        """A restore refused because a pid of the tree is in use by a process
        that is no descendant of the runner: another job took the pid after
        the dump (pid_max wraps quickly on a busy machine). That is the
        host's, not criu's: the test can't run, it is skipped with the
        holder named. A holder of ours (a leftover of criu's) still fails."""
        m = re.search(r"pid (\d+) is in use", res.stderr)
        if not m:
            return
        pid = int(m.group(1))
        try:
            holder = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            return
        if descends_from(pid, os.getpid()):
            return
        pytest.skip(f"{self.name}: pid {pid} was taken between the dump and the restore "
                    f"by a process outside the test ({holder[:60]!r}); pid_max is "
                    f"{Path('/proc/sys/kernel/pid_max').read_text().strip()}")

    def restore_ok(self, img: Path, opts: list[str] = [],
                   env: Optional[dict[str, str]] = None) -> None:
        res, pidfile = self.restore(img, opts, env)
        self.restored(img, res, pidfile)

    def restored(self, img: Path, res: CriuResult, pidfile: Path) -> None:
        """Take the task of a restore() as restore_ok() does."""
        if res.returncode != 0:
            self.skip_if_pid_taken(res)
            self.fail("criu restore failed", res)
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError) as e:
            self.fail(f"no pid in --pidfile {pidfile}: {e}", res)
        if pid != self.pid and self.pidns and ns_pid(pid) == 1:
            # a new pid namespace: the init is 1 inside, with a new pid outside
            self.note(f"restored as pid namespace init {pid}")
            self.pid = pid
        if pid != self.pid:
            msg = f"restored with pid {pid}, not {self.pid}"
            self.alive, self.ours, self.pid = True, True, pid
            self.fail(msg, res)
        self.alive = True
        self.ours = True
        self.note("restored")
        self.redirects += vdsomaps.parse_log(img.joinpath("restore.log").read_text(
            errors="replace"))
        state = proc_state(self.pid)
        if state is None or state in "ZX":
            self.fail(f"the restored task is not there (state {state})", res)

    # -- verdict
    def finish(self, expect: str = "pass") -> None:
        """SIGTERM, reap, and check the verdict."""
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        rc = self._wait(EXIT_TIMEOUT)
        if rc is None:
            self.fail(f"did not exit within {EXIT_TIMEOUT} s of SIGTERM")
        verdict = self.verdict()
        self.note(f"exit {rc}: {verdict}")
        ok = rc == 0 and verdict == "PASS"
        msgs = []
        if expect == "pass" and not ok:
            msgs.append(f"FAILED: exit status {rc}, verdict: {verdict}")
        if expect == "fail" and ok:
            msgs.append("passed but was expected to fail")
        msgs += self.problems
        self.problems = []
        if msgs:
            self.fail("\n".join(msgs))


# ---------------------------------------------------------------- flavours

def run_flavour(desc: Desc, flavour: str, run: type[Run] = Run) -> None:
    """desc's program through one flavour, as a run (Run, or a subclass
    that records and checks more, such as test_tree.py's TreeRun)."""
    gap = 0.0 if flavour == "none" else GAP
    # restore_env: extra environment of criu restore (test hooks)
    env = dict(os.environ, **desc.restore_env) if desc.restore_env else None
    with run(desc.name, flavour, args=desc.args, gap=gap, pidns=desc.pidns) as r:
        r.start()
        r.record()
        snap = r.snapshot()

        def dump_restore(tag: str, what: str, wait: bool = True) -> None:
            img = r.imgdir(tag)
            r.dump_ok(img, desc.dump_opts)
            if wait:
                time.sleep(GAP)
            r.restore_ok(img, desc.restore_opts, env)
            r.check(what, snap)

        if flavour == "none":
            time.sleep(r.SETTLE)
            r.check("self-check", snap)
        elif flavour == "plain":
            dump_restore("img", "after restore")
        elif flavour == "leave-running":
            img = r.imgdir("img")
            r.dump_ok(img, desc.dump_opts, leave_running=True)
            r.check("after dump --leave-running", snap)
            r.kill()
            time.sleep(GAP)
            r.restore_ok(img, desc.restore_opts, env)
            r.check("after restore", snap)
        elif flavour == "twice":
            dump_restore("img1", "after the first restore")
            dump_restore("img2", "after the second restore", wait=False)
        else:
            raise ValueError(f"unknown flavour {flavour}")
        r.finish(desc.expect)


def criu_available() -> bool:
    return os.access(CRIU, os.X_OK)


def need_criu() -> None:
    """For a test that runs criu: skipped with ZDTM_SELFCHECK=1, failed (not
    skipped) when criu is not built. conftest.py's need_criu fixture."""
    if SELFCHECK:
        pytest.skip("ZDTM_SELFCHECK=1: no criu")
    why = buildpaths.missing_criu()
    if why:
        pytest.fail(why)


@dataclass
class ProcStat:
    pid: int
    comm: str
    state: str
    ppid: int
    pgid: int
    sid: int

    def __str__(self) -> str:
        return (f"{self.pid} ({self.comm}, state {self.state}, ppid {self.ppid}, "
                f"pgid {self.pgid}, sid {self.sid})")


def processes() -> list[ProcStat]:
    """Every process in /proc (zombies included)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        out.append(ProcStat(int(name), comm, f[0], int(f[1]), int(f[2]), int(f[3])))
    return out


def session_members(sid: int) -> list[int]:
    """Pids of the processes in session sid (zombies included)."""
    return [p.pid for p in processes() if p.sid == sid]


def leftovers(sid: int) -> list[ProcStat]:
    """What a failed restore of the session sid may have left behind: every
    process in that session or in the process group sid, and every child
    of the runner (criu's orphans come to us, the subreaper), once the
    dead ones among those were reaped."""
    reap_leftovers()
    me = os.getpid()
    return [p for p in processes() if sid in (p.sid, p.pgid) or p.ppid == me]


def reap_session(sid: int, timeout: float = 5.0) -> list[int]:
    """Wait for every process of session sid to be gone, reaping those
    that were reparented to us. A leftover zombie would keep its session
    and group ids in use, and a restore of the leader's pid would fail.
    Returns what is still there after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        reap_leftovers()
        left = session_members(sid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.01)


def descends_from(pid: int, ancestor: int) -> bool:
    """pid is ancestor or below it (the PPid chain of /proc/PID/status)."""
    for _ in range(4096):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        m = re.search(r"^PPid:\s+(\d+)", status, re.M)
        if not m:
            return False
        pid = int(m.group(1))
    return False


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = [
    "CRIU", "BUILD", "GAP", "SELFCHECK", "FLAVOURS", "Desc", "Run", "Snapshot",
    "ZdtmFailure", "all_descs", "load_desc", "run_flavour", "criu_available", "need_criu",
    "reap_leftovers", "hash_tree", "error_lines", "proc_state", "pid_exists", "descends_from",
]
