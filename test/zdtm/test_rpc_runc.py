"""runc (Debian's 1.1.5) with our criu first in PATH: a busybox container
of `runc spec` (pid, network, ipc, uts and mount namespaces) with a
counter inside.

runc checkpoints it through criu swrk (the root, its bind mounts and
masked paths as external mounts, its cgroups with manage_cgroups and
freeze_cgroup, its empty network namespace) and restores it:
test_runc_round_trip.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator, TypeVar

import pytest

import zdtm

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

RUNC = shutil.which("runc")
BUSYBOX = next((p for p in ("/bin/busybox", "/usr/bin/busybox") if os.path.exists(p)), None)

COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done"


class Container:
    TERMINAL = False                # the spec's process.terminal
    SCRIPT = COUNTER                # what sh -c runs in it
    TOOLS: tuple[str, ...] = ()     # busybox applets it needs besides sh, sleep, cat, echo
    RUNTIME = RUNC                  # the OCI runtime: runc, or crun (test_rpc_crun.py)

    def __init__(self, base: Path):
        self.base = base
        self.bundle = base / "bundle"
        self.state = base / "state"
        self.bin = base / "bin"
        self.name = f"zdtm-rpc-{os.getpid()}"
        self.calls = 0

    def runc(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   **self.runtime_env())
        self.calls += 1
        out = self.base / f"runc{self.calls}.out"
        err = self.base / f"runc{self.calls}.err"
        # files, not pipes: `run -d` hands its stdio to the container for good
        with open(out, "w") as o, open(err, "w") as e:
            rc = subprocess.run([*self.runtime_cmd(), "--root", str(self.state), *args], cwd=self.bundle,
                                env=env, stdout=o, stderr=e, timeout=120,
                                stdin=subprocess.DEVNULL).returncode
        p = subprocess.CompletedProcess(args, rc, out.read_text(), err.read_text())
        if check and p.returncode:
            raise AssertionError(f"runc {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
        return p

    def runtime_env(self) -> dict[str, str]:
        """More environment for the runtime."""
        return {}

    def runtime_cmd(self) -> list[str]:
        """The runtime's command, before its global options."""
        return [str(self.RUNTIME)]

    def create(self) -> None:
        root = self.bundle / "rootfs"
        for d in ("bin", "tmp", "proc", "sys", "dev"):
            (root / d).mkdir(parents=True, exist_ok=True)
        shutil.copy(BUSYBOX, root / "bin" / "busybox")   # type: ignore[arg-type]
        for tool in ("sh", "sleep", "cat", "echo") + self.TOOLS:
            (root / "bin" / tool).symlink_to("busybox")
        self.bin.mkdir()
        (self.bin / "criu").symlink_to(zdtm.CRIU)
        self.runc("spec")
        spec = json.loads((self.bundle / "config.json").read_text())
        spec["process"]["terminal"] = self.TERMINAL
        spec["process"]["args"] = ["/bin/sh", "-c", self.SCRIPT]
        spec["root"]["readonly"] = False
        (self.bundle / "config.json").write_text(json.dumps(spec))
        self.runc("run", "-d", *self.run_args(), self.name)

    def run_args(self) -> list[str]:
        """More options of `runc run`."""
        return []

    def count(self) -> int:
        try:
            return int((self.bundle / "rootfs" / "tmp" / "count").read_text())
        except (OSError, ValueError):
            return 0

    def counting(self) -> bool:
        first = self.count()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.count() > first:
                return True
            time.sleep(0.05)
        return False

    def status(self) -> str:
        p = self.runc("state", self.name, check=False)
        return json.loads(p.stdout)["status"] if p.returncode == 0 else "gone"

    def destroy(self) -> None:
        self.runc("kill", self.name, "KILL", check=False)
        deadline = time.monotonic() + 5
        while self.status() == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
        self.runc("delete", "-f", self.name, check=False)
        zdtm.reap_leftovers()


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    yield from running(Container(tmp_path))


C = TypeVar("C", bound="Container")


def running(c: C) -> Iterator[C]:
    """@c made and counting, for a test; destroyed after it."""
    if not c.RUNTIME:
        pytest.skip("runc is not installed (scripts/install-deps.sh installs it)")
    if not BUSYBOX:
        pytest.skip("no static busybox for the container's root (package busybox-static)")
    try:
        c.create()
    except AssertionError as e:
        c.destroy()
        pytest.skip(f"{Path(str(c.RUNTIME)).name} can't run a container here: {e}")
    try:
        if not c.counting():
            pytest.fail("the container's counter does not count")
        yield c
    finally:
        c.destroy()


def checkpoint(c: Container, *extra: str) -> subprocess.CompletedProcess:
    img, work = c.base / "img", c.base / "work"
    img.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    return c.runc("checkpoint", "--image-path", str(img), "--work-path", str(work),
                  *extra, c.name, check=False)


def test_runc_round_trip(container: Container) -> None:
    """checkpoint, restore -d, the counter goes on, exec works in the
    restored container, kill and delete clean up."""
    c = container
    p = checkpoint(c)
    assert p.returncode == 0, p.stderr
    before = c.count()
    assert c.status() in ("stopped", "gone")
    c.runc("restore", "-d", "--image-path", str(c.base / "img"), "--work-path",
           str(c.base / "work"), c.name)
    assert c.status() == "running" and c.counting()
    assert c.count() > before, "the counter restarted"
    # /proc/1 of the container's pid namespace is the restored counter:
    # /tmp/count itself may be caught empty between the shell's truncate
    # and its write.
    cmdline = c.runc("exec", c.name, "cat", "/proc/1/cmdline").stdout
    assert "/tmp/count" in cmdline, cmdline


def test_runc_leave_running(container: Container) -> None:
    """checkpoint --leave-running: the container runs on and counts; once
    it is killed and deleted, restore -d brings back the checkpointed one,
    whose counter goes on from the checkpoint's value (not from 0)."""
    c = container
    deadline = time.monotonic() + 10
    while c.count() < 20 and time.monotonic() < deadline:
        time.sleep(0.05)    # far enough from 0 that a fresh start shows
    before = c.count()
    assert before >= 20, "the counter is too slow"
    p = checkpoint(c, "--leave-running")
    assert p.returncode == 0, p.stderr
    assert c.status() == "running" and c.counting(), "the container stopped"
    c.destroy()
    assert c.status() == "gone"
    c.runc("restore", "-d", "--image-path", str(c.base / "img"), "--work-path",
           str(c.base / "work"), c.name)
    assert c.status() == "running" and c.counting()
    assert c.count() > before, "the counter restarted"


def pre_dump_then_parent(c: Container, detach: str) -> None:
    """checkpoint --pre-dump into A, the container counts on; checkpoint
    --parent-path ../A into B stores less than A for the tasks both hold
    and leaves the rest in it;
    restore from B (with @detach, the runtime's spelling), the counter
    going on."""
    a, b, work = c.base / "A", c.base / "B", c.base / "work"
    for d in (a, b, work):
        d.mkdir()
    p = c.runc("checkpoint", "--pre-dump", "--image-path", str(a), "--work-path", str(work),
               c.name, check=False)
    assert p.returncode == 0, p.stderr
    assert c.status() == "running" and c.counting(), "the container stopped"
    p = c.runc("checkpoint", "--parent-path", "../A", "--image-path", str(b), "--work-path",
               str(work), c.name, check=False)
    assert p.returncode == 0, p.stderr
    before = c.count()
    assert os.readlink(b / "parent") == "../A"
    # the shell's `sleep` children come and go between the two: only the
    # tasks both checkpoints hold can have left pages in A
    both = {f.name for f in a.glob("pages-*.img")} & {f.name for f in b.glob("pages-*.img")}
    assert "pages-1.img" in both, (sorted(a.iterdir()), sorted(b.iterdir()))
    stored = {d: sum((d / n).stat().st_size for n in both) for d in (a, b)}
    assert stored[b] < stored[a], stored
    c.runc("restore", detach, "--image-path", str(b), "--work-path", str(work), c.name)
    assert c.status() == "running" and c.counting()
    assert c.count() > before, "the counter restarted"


def test_runc_pre_dump(container: Container) -> None:
    """runc checkpoint --pre-dump into A (runc asks FEATURE_CHECK mem_track
    first, then PRE_DUMP with track_mem), the container counts on; runc
    checkpoint --parent-path ../A into B (DUMP with parent_img and
    track_mem) stores less than A and leaves the rest in it; restore -d
    from B brings the container back, its counter going on."""
    pre_dump_then_parent(container, "-d")


def test_runc_pre_dump_to_page_servers(container: Container) -> None:
    """runc checkpoint --pre-dump --page-server to one server, then runc
    checkpoint --page-server --parent-path to a second, given the first's
    directory: the second server's images hold less than the first's for
    the counter, link to them, and restore there (with runc's own
    descriptors.json, which runc writes beside its image path, copied as a
    migration would); the counter goes on."""
    from test_pagesrv import Server
    c = container
    a, b, work = c.base / "A", c.base / "B", c.base / "work"
    s1, s2 = c.base / "S1", c.base / "S2"
    for d in (a, b, work, s1, s2):
        d.mkdir()
    srv = Server(s1, c.base / "pslog1", address="127.0.0.1")
    try:
        p = c.runc("checkpoint", "--pre-dump", "--page-server", f"127.0.0.1:{srv.port}",
                   "--image-path", str(a), "--work-path", str(work), c.name, check=False)
        assert p.returncode == 0, p.stderr
        rc, err = srv.wait()
        assert rc == 0, err
    finally:
        srv.stop()
    assert c.status() == "running" and c.counting(), "the container stopped"
    srv = Server(s2, c.base / "pslog2", address="127.0.0.1",
                 opts=["--prev-images-dir", "../S1"])
    try:
        p = c.runc("checkpoint", "--page-server", f"127.0.0.1:{srv.port}", "--parent-path",
                   "../A", "--image-path", str(b), "--work-path", str(work), c.name,
                   check=False)
        assert p.returncode == 0, p.stderr
        rc, err = srv.wait()
        assert rc == 0, err
    finally:
        srv.stop()
    before = c.count()
    assert os.readlink(s2 / "parent") == "../S1"
    assert (s2 / "pages-1.img").stat().st_size < (s1 / "pages-1.img").stat().st_size
    shutil.copy(b / "descriptors.json", s2)
    c.runc("restore", "-d", "--image-path", str(s2), "--work-path", str(work), c.name)
    assert c.status() == "running" and c.counting()
    assert c.count() > before, "the counter restarted"
