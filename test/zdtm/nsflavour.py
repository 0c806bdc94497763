"""The zdtm `ns` flavour (ns.md): every test program run inside a container
that ctr makes (pid, mount, network, ipc, uts and cgroup namespaces, the
OCI default mounts, pivot_root into the minimal rootfs), dumped and
restored whole with `criu restore --root`.

On by default: every program gets an `ns` parameter in test_zdtm.py;
ZDTM_NS=0 leaves the flavour out.  Where criu can't dump a container here,
every ns run skips with the reason; one probe dump per session finds that
out by trying.  With ZDTM_SELFCHECK=1 the programs run in their containers
without criu (start, ready, SIGTERM, verdict): the container side alone.

Layout: one copy of the build's rootfs per session (ZDTM_WORKDIR/
zdtm-ns.XXXX/root); each run works in root/runs/NAME.ns.XXXX, which the
test sees as /runs/NAME.ns.XXXX (its cwd, out, ready and log files), so
the container holds no file outside its root.  The program runs as pid 2
under `ctr init` (pid 1), as it runs under the runner elsewhere: a session
leader with an ordinary parent; a .desc with "pidns" makes it pid 1
instead.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

import container as ct
import zdtm
from reap import wait_gone

ENABLED = os.environ.get("ZDTM_NS", "1") != "0"
FLAVOUR = "ns"

# Programs that can't run in the flavour, and why.
EXCLUDED: dict[str, str] = {
    "ns_refused": "makes namespaces criu refuses; the container already has them",
    "refuse_userns": "a refusal test of user namespaces: the container's own are in the way",
    "sysvipc_host": "about the host's IPC namespace, which a container does not share",
    "sysvipc_ns": "sets IPC sysctls in /proc/sys, read-only in a container (OCI readonlyPaths)",
    "ns_pid_tree": "reads its NSpid levels in the host's /proc; a container has its own /proc",
    # criu's limits, said at dump: below the tree's root no task may have
    # a network or user namespace of its own (CRIU allows nesting); nested
    # mount namespaces are restored
    "sk_unix_ns": "makes a network namespace of its own too: nested network namespaces are "
                  "not supported",
    "sk_unix_netns": "makes a network namespace of its own: nested network namespaces are "
                     "not supported",
    "userns_maps": "makes a user namespace of its own: nested user namespaces are not supported",
}
_base: Optional[Path] = None
_probe: Optional[str] = None        # None: not probed; "": criu dumps containers
_count = 0


def applies(desc: zdtm.Desc) -> Optional[str]:
    """None when the flavour runs desc, else why not."""
    if desc.name in EXCLUDED:
        return EXCLUDED[desc.name]
    if "plain" not in desc.flavors:
        return f"{desc.name} has no plain flavour"
    return None


def session_root() -> Path:
    """This session's rootfs, made on first use; removed at exit unless a
    failed run kept its directory in it."""
    global _base
    if _base is None:
        zdtm.WORKDIR.mkdir(parents=True, exist_ok=True)
        _base = Path(tempfile.mkdtemp(prefix="zdtm-ns.", dir=zdtm.WORKDIR))
        ct.copy_rootfs(_base / "root")
        (_base / "root" / "runs").mkdir()
        atexit.register(_cleanup)
    return _base / "root"


def _cleanup() -> None:
    if _base is None:
        return
    runs = _base / "root" / "runs"
    if runs.exists() and any(runs.iterdir()):
        print(f"\nzdtm: ns flavour work directories kept in {runs}")
        return
    ct.remove_tree(_base)


def container_name() -> str:
    global _count
    _count += 1
    return f"zdtm-ns-{os.getpid()}-{_count}"


class NsRun(zdtm.Run):
    """A zdtm.Run whose program runs in a container: self.init is the
    container's init (what criu dumps), self.pid the program (what the
    runner watches) as the host sees them."""

    def __init__(self, desc: zdtm.Desc, gap: float):
        super().__init__(desc.name, FLAVOUR, args=desc.args, gap=gap)
        self.root = session_root()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = Path(tempfile.mkdtemp(prefix=f"{desc.name}.{FLAVOUR}.",
                                         dir=self.root / "runs"))
        os.chmod(self.dir, 0o755)
        self.out = self.dir / f"{self.name}.out"
        self.ready = self.dir / f"{self.name}.ready"
        self.log = self.dir / f"{self.name}.log"
        self.as_init = desc.pidns
        self.init = 0
        self.inside_pid = 0     # the program's pid in the container
        self.ctr_opts: list[str] = []   # more of ctr's options (volumes...)
        self.ctr = ct.Container(self.dir, self.root, container_name())

    def __enter__(self) -> "NsRun":
        return self

    def inside(self, p: Path) -> str:
        return "/" + str(p.relative_to(self.root))

    def command(self) -> list[str]:
        cmd = [f"/zdtm/{self.name}", "--outfile", self.inside(self.out),
               "--readyfile", self.inside(self.ready)]
        if self.extra:
            cmd += ["--extra", self.extra]
        return cmd + self.args

    def start(self) -> None:
        if not (self.root / "zdtm" / self.name).exists():
            self.fail(f"{self.name} is not in the rootfs (built? mkrootfs.sh)")
        env = {"ZDTM_GAP": str(self.gap), "ZDTM_ODD": "a=b c\td\u00e9"}
        self.ctr.opts = [] if self.as_init else ["--init"]
        self.ctr.opts += ["--cwd", self.inside(self.dir), "--output", self.inside(self.log)]
        self.ctr.opts += self.ctr_opts
        for k, v in env.items():
            self.ctr.opts += ["-e", f"{k}={v}"]
        self.ctr.cmd = self.command()
        p = self.ctr.try_start()
        if p.returncode != 0:
            self.fail(f"ctr could not start the container: {p.stderr.strip()}")
        self.init = self.pid = self.ctr.pid
        self.alive = True
        self.note(f"container init {self.init}")
        deadline = time.monotonic() + zdtm.READY_TIMEOUT
        while not self.ready.exists():
            if zdtm.proc_state(self.init) in (None, "Z", "X"):
                # `ctr init` exits with the program's status: a skip is 77
                rc = self._wait(5)
                self.alive = False
                self.skip_or_fail(-1 if rc is None else rc)
            if time.monotonic() > deadline:
                self.fail("not ready in time")
            time.sleep(0.01)
        self.find_program(int(self.ready.read_text()))

    def find_program(self, inside: int) -> None:
        """self.pid: the host pid of the task that is `inside` in the
        container (the init's child, or the init)."""
        if self.as_init or inside == 1:
            self.pid = self.init
        else:
            kids = [t for t in ct.tasks_in_pidns(ct.ns_id(self.init, "pid"))
                    if zdtm.ns_pid(t) == inside]
            if not kids:
                self.fail(f"no task {inside} in the container of init {self.init}")
            self.pid = kids[0]
        if zdtm.ns_pid(self.pid) != inside:
            self.fail(f"task {self.pid} is not {inside} in the container")
        self.inside_pid = inside

    def dump_cmd(self, img: Path, opts: list[str]) -> list[str]:
        return ["dump", "-t", str(self.init), "-D", str(img), "-o", "dump.log",
                "-v4"] + opts

    def _wait(self, timeout: float) -> Optional[int]:
        """Reap the container's init (ours: the session is a subreaper);
        `ctr init` exits with the program's status."""
        rc = wait_gone(self.init, timeout)
        if rc is not None:
            self.alive = False
        return rc

    def kill(self) -> None:
        if self.alive and self.init:
            try:
                ct.kill_tree(ct.tasks_in_pidns(ct.ns_id(self.init, "pid")))
            except OSError:
                pass                    # gone meanwhile
            self._wait(10)
            self.alive = False
        if self.ctr.state.exists():
            self.ctr.ctr("delete", "--state", str(self.ctr.state), self.ctr.name)

    def restore_ok(self, img: Path, opts: list[str] = [],
                   env: Optional[dict] = None) -> None:
        # the dump may have killed the task: its pid inside as it was found
        inside = self.inside_pid
        res, pidfile = self.restore(img, ["--root", str(self.root)] + list(opts), env)
        if res.returncode != 0:
            self.fail("criu restore --root failed", res)
        try:
            self.init = self.pid = int(pidfile.read_text().strip())
        except (OSError, ValueError) as e:
            self.fail(f"no pid in --pidfile {pidfile}: {e}", res)
        self.alive = True
        if zdtm.ns_pid(self.init) != 1:
            self.fail(f"the restored init {self.init} is not pid 1 of a namespace", res)
        self.find_program(inside)
        self.note("restored")


def probe() -> str:
    """One probe dump per session: "" when criu dumps a container, else the
    reason to skip (criu's own Error line)."""
    global _probe
    if _probe is not None:
        return _probe
    desc = zdtm.load_desc("sys_pause")
    with NsRun(desc, 0.0) as r:
        r.start()
        img = r.imgdir("probe")
        res = r.dump(img, leave_running=True)
        line = ct.namespace_refusal(res)
        if line is not None:
            r.check_running("after the refused probe dump")
            # its images directory goes with the probe's run: no "see LOG"
            _probe = f"{ct.ISSUE12}: {line.split('; see ')[0]}"
        else:
            _probe = ""
        r.kill()
    return _probe


def run(desc: zdtm.Desc, selfcheck: bool = zdtm.SELFCHECK) -> None:
    """The flavour: start in a container, (dump, gap, restore --root, check)
    unless selfchecking, SIGTERM, verdict; the container is deleted."""
    gap = 0.0 if selfcheck else zdtm.GAP
    env = dict(os.environ, **desc.restore_env) if desc.restore_env else None
    with NsRun(desc, gap) as r:
        r.start()
        snap = r.snapshot()
        if selfcheck:
            r.check_running("self-check in a container", snap)
        else:
            img = r.imgdir("img")
            r.dump_ok(img, desc.dump_opts)
            r.kill()                    # nothing of the old container may stay
            time.sleep(zdtm.GAP)
            r.restore_ok(img, desc.restore_opts, env)
            r.check_running("after restore into a new container", snap)
        r.finish(desc.expect)
        if r.ctr.state.exists():
            r.ctr.delete(pid=r.init)


def run_or_skip(desc: zdtm.Desc) -> None:
    """test_zdtm.py's entry: skips with the reason where the flavour can't
    run (no ctr, an excluded program, criu refusing containers)."""
    import pytest

    why = ct.available() or applies(desc)
    if why:
        pytest.skip(why)
    if not zdtm.SELFCHECK:
        zdtm.need_criu()
        why = probe()
        if why:
            pytest.skip(why)
    run(desc)
