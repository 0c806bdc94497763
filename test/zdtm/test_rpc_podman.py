"""podman (Debian's 4.3, `--runtime runc`) with our criu first in PATH: a
busybox container with a counter inside, checkpointed to a tar file,
removed, and restored from that file: test_podman_export_import.

podman is kept apart from the machine: its storage (vfs), run and temp
directories, its containers.conf and storage.conf are the test's own; its
cgroups (cgroupfs manager) go below a zdtm-podman-PID parent that the
teardown removes, so the suite's host-state check sees any leftover; no
network (the container has none). The image is `podman import` of a
rootfs tarball (no registry). The hard rlimits of the machine cannot be
raised (no CAP_SYS_RESOURCE), so the container gets limits at or below
ours.
"""
from __future__ import annotations

import glob
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

import zdtm

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

PODMAN = shutil.which("podman")
RUNC = shutil.which("runc")
BUSYBOX = next((p for p in ("/bin/busybox", "/usr/bin/busybox") if os.path.exists(p)), None)
IMAGE = "localhost/zdtm-busybox"
COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done"
# c/image keeps a blob cache here for root whatever the storage root is
BLOB_CACHE = Path("/var/lib/containers/cache")


def cgroup_dirs(name: str) -> list[str]:
    """NAME's directory in every cgroup hierarchy mounted, deepest first."""
    found = glob.glob(f"/sys/fs/cgroup/**/{name}", recursive=True)
    found += glob.glob(f"/sys/fs/cgroup/**/{name}/**/", recursive=True)
    return sorted({p.rstrip("/") for p in found}, key=len, reverse=True)


class Podman:
    def __init__(self, base: Path):
        self.base = base
        self.bin = base / "bin"
        self.name = f"zdtm-podman-{os.getpid()}"
        self.cgroup = f"zdtm-podman-{os.getpid()}"
        self.calls = 0
        self.made: list[Path] = [p for p in (BLOB_CACHE.parent, BLOB_CACHE) if not p.exists()]

    def env(self) -> dict[str, str]:
        return dict(os.environ,
                    PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                    CONTAINERS_CONF=str(self.base / "containers.conf"),
                    CONTAINERS_STORAGE_CONF=str(self.base / "storage.conf"),
                    TMPDIR=str(self.base / "tmp"))

    def podman(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        b = self.base
        cmd = [str(PODMAN), "--root", str(b / "root"), "--runroot", str(b / "runroot"),
               "--tmpdir", str(b / "tmp"), "--storage-driver", "vfs",
               "--cgroup-manager", "cgroupfs", "--events-backend", "file",
               "--runtime", str(RUNC), *args]
        self.calls += 1
        out = b / f"podman{self.calls}.out"
        err = b / f"podman{self.calls}.err"
        # files, not pipes: conmon outlives the podman that started it
        with open(out, "w") as o, open(err, "w") as e:
            rc = subprocess.run(cmd, env=self.env(), stdout=o, stderr=e, timeout=120,
                                stdin=subprocess.DEVNULL).returncode
        p = subprocess.CompletedProcess(args, rc, out.read_text(), err.read_text())
        if check and p.returncode:
            raise AssertionError(f"podman {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
        return p

    def setup(self) -> None:
        b = self.base
        for d in ("bin", "tmp", "root", "runroot"):
            (b / d).mkdir()
        (self.bin / "criu").symlink_to(zdtm.CRIU)
        (b / "containers.conf").write_text(
            '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
            f'events_logfile_path = "{b}/events.log"\n'
            '[containers]\nnetns = "none"\n')
        (b / "storage.conf").write_text(
            f'[storage]\ndriver = "vfs"\nrunroot = "{b}/runroot"\ngraphroot = "{b}/root"\n')
        root = b / "rootfs"
        for d in ("bin", "tmp", "proc", "sys", "dev", "etc"):
            (root / d).mkdir(parents=True)
        shutil.copy(BUSYBOX, root / "bin" / "busybox")   # type: ignore[arg-type]
        for tool in ("sh", "sleep", "cat", "echo"):
            (root / "bin" / tool).symlink_to("busybox")
        subprocess.run(["tar", "-C", str(root), "-cf", str(b / "rootfs.tar"), "."], check=True)
        self.podman("import", str(b / "rootfs.tar"), IMAGE)

    def start(self) -> None:
        nofile = min(20000, hard_limit(resource.RLIMIT_NOFILE))
        nproc = min(4096, hard_limit(resource.RLIMIT_NPROC))
        self.podman("run", "-d", "--name", self.name, "--network", "none",
                    "--cgroup-parent", f"/{self.cgroup}",
                    "--ulimit", f"nofile={min(1024, nofile)}:{nofile}",
                    "--ulimit", f"nproc={nproc}:{nproc}",
                    IMAGE, "/bin/sh", "-c", COUNTER)

    def stored_count(self) -> int:
        """The counter's file read from the container's storage (stopped or not)."""
        root = self.podman("mount", self.name).stdout.strip()
        try:
            return int((Path(root) / "tmp" / "count").read_text())
        finally:
            self.podman("umount", self.name)

    def count(self) -> int:
        p = self.podman("exec", self.name, "cat", "/tmp/count", check=False)
        try:
            return int(p.stdout)
        except ValueError:
            return 0

    def status(self) -> str:
        p = self.podman("inspect", "--format", "{{.State.Status}}", self.name, check=False)
        return p.stdout.strip() if p.returncode == 0 else "gone"

    def wait_count(self, above: int) -> int:
        """The first value of the counter other than ABOVE (0 if none in 10 s)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            n = self.count()
            if n and n != above:
                return n
            time.sleep(0.05)
        return 0

    def destroy(self) -> None:
        self.podman("rm", "-f", "-t", "0", "--all", check=False)
        self.podman("rmi", "-f", "--all", check=False)
        zdtm.reap_leftovers()
        for d in cgroup_dirs(self.cgroup):
            try:
                os.rmdir(d)
            except OSError:
                pass    # the host-state check names what stayed
        for p in reversed(self.made):
            shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(self.base, ignore_errors=True)


def hard_limit(which: int) -> int:
    hard = resource.getrlimit(which)[1]
    return hard if hard != resource.RLIM_INFINITY else 1 << 30


@pytest.fixture
def podman() -> Iterator[Podman]:
    if not PODMAN:
        pytest.skip("podman is not installed (scripts/install-deps.sh installs it)")
    if not RUNC:
        pytest.skip("runc is not installed (scripts/install-deps.sh installs it)")
    if not BUSYBOX:
        pytest.skip("no static busybox for the container's root (package busybox-static)")
    # podman refuses a runroot longer than 50 characters: pytest's are
    c = Podman(Path(tempfile.mkdtemp(prefix="zdtm-podman-")))
    try:
        c.setup()
        c.start()
        deadline = time.monotonic() + 10
        while c.count() < 20:   # far from where a restarted counter starts
            if time.monotonic() > deadline:
                pytest.fail("the container's counter does not count")
            time.sleep(0.1)
        yield c
    finally:
        c.destroy()


def stats(p: subprocess.CompletedProcess, key: str) -> dict[str, int]:
    """criu's statistics of the one container in --print-stats' JSON."""
    doc = json.loads(p.stdout)
    [ctr] = doc["container_statistics"]
    assert ctr[key] > 0, doc
    return ctr["criu_statistics"]


def test_podman_export_import(podman: Podman) -> None:
    """checkpoint --export, rm, restore --import: the counter goes on from
    where it stopped, criu's statistics reach podman."""
    c = podman
    tar = c.base / "checkpoint.tar"
    p = c.podman("container", "checkpoint", "--export", str(tar), "--print-stats", c.name)
    dump = stats(p, "runtime_checkpoint_duration")
    assert dump["frozen_time"] > 0 and dump["pages_written"] > 0, dump
    assert c.status() == "exited"
    frozen = c.stored_count()
    c.podman("rm", c.name)
    assert c.status() == "gone"
    left = [d for d in cgroup_dirs(c.cgroup) if "/libpod-" in d]
    assert not left, f"podman rm left the container's cgroups: {left}"
    p = c.podman("container", "restore", "--import", str(tar), "--print-stats")
    rst = stats(p, "runtime_restore_duration")
    assert rst["pages_restored"] > 0 and rst["restore_time"] > 0, rst
    assert c.status() == "running"
    # a restarted counter would write 1, 2, ... over the frozen value
    after = c.wait_count(frozen)
    assert after > frozen, f"the counter went from {frozen} to {after} after restore"
    assert c.status() == "running"


def test_podman_leave_running(podman: Podman) -> None:
    """checkpoint --leave-running --export: the container runs on and
    counts; once it is removed, restore --import brings back the
    checkpointed one, whose counter goes on from the checkpoint (not 0)."""
    c = podman
    tar = c.base / "checkpoint.tar"
    before = c.count()
    c.podman("container", "checkpoint", "--leave-running", "--export", str(tar), c.name)
    assert c.status() == "running"
    assert c.wait_count(c.count()) > before, "the container stopped counting"
    c.podman("rm", "-f", "-t", "0", c.name)
    assert c.status() == "gone"
    c.podman("container", "restore", "--import", str(tar))
    assert c.status() == "running"
    after = c.wait_count(0)
    assert after >= before, f"the counter went from {before} to {after} after restore"
