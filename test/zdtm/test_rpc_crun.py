"""crun with checkpoint/restore, built from Debian's source package against
our libcriu (scripts/build-crun.sh; Debian's binary crun has no CRIU
support). crun dlopen()s libcriu.so.2 and calls criu.h's functions, which
start our criu swrk. The busybox container of test_rpc_runc.py, with its
counter: checkpoint, restore --detach, the counter goes on
(test_crun_round_trip); --leave-running (test_crun_leave_running); an
established TCP connection with --tcp-established (test_crun_tcp);
--pre-dump then --parent-path (criu_pre_dump(), SINGLE_PRE_DUMP, then a
dump on its parent: test_crun_pre_dump).
"""
from __future__ import annotations

import functools
import os
import shlex
import subprocess
from pathlib import Path
from typing import Iterator, Optional

import pytest

import buildpaths
import zdtm
from test_rpc_runc import Container, checkpoint, pre_dump_then_parent, running
from test_rpc_runc_tcp import TcpContainer, growing

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

SCRIPT = buildpaths.ROOT / "scripts" / "build-crun.sh"
V2_CONTROLLERS = "/sys/fs/cgroup/unified/cgroup.controllers"
try:
    HYBRID_V2_CONTROLLERS = bool(Path(V2_CONTROLLERS).read_text().strip())
except OSError:
    HYBRID_V2_CONTROLLERS = False


@functools.lru_cache(maxsize=None)
def built() -> tuple[Optional[Path], str]:
    """crun and the directory of its libcriu.so.2, built once per run; or
    None and why not."""
    env = {"BUILD_DIR": str(buildpaths.build_dir()), "SKIP_BUILD": "1"}
    try:
        p = subprocess.run(["bash", str(SCRIPT)], env=dict(os.environ, **env),
                           capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None, "scripts/build-crun.sh took over 15 minutes"
    if p.returncode:
        return None, (p.stderr.strip().splitlines() or ["(no output)"])[-1]
    crun = Path(p.stdout.strip().splitlines()[-1])
    libs = sorted(crun.parent.glob("libcriu/**/libcriu.so.2"))
    if not libs:
        return None, f"no libcriu.so.2 beside {crun}"
    return crun, str(libs[0].parent)


class CrunMixin:
    """runc's test container, run by crun with our libcriu.

    crun refuses a hybrid layout whose cgroup2 has a controller (hugetlb on
    these machines). Where it has one, every crun command runs in one mount
    namespace of the test's own where that list reads empty (the host's is
    untouched), held by a process for the container's life; crun then puts
    the container in the v1 controllers' cgroups, as runc does. One
    namespace for all the commands: criu (run by `crun checkpoint`) takes a
    file on a mount of its own namespace, like the container's stdout here,
    as reachable, and a namespace made per command would have other ids."""

    holder: Optional[subprocess.Popen] = None

    def runtime_env(self) -> dict[str, str]:
        return {"LD_LIBRARY_PATH": built()[1]}

    def runtime_cmd(self) -> list[str]:
        cmd = [str(self.RUNTIME), "--cgroup-manager=cgroupfs"]  # type: ignore[attr-defined]
        if not HYBRID_V2_CONTROLLERS:
            return cmd
        if self.holder is None:
            self.holder = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                 f"mount --bind /dev/null {V2_CONTROLLERS} && echo ready && exec sleep infinity"],
                stdout=subprocess.PIPE, text=True)
            assert self.holder.stdout and self.holder.stdout.readline() == "ready\n", \
                "the mount namespace for crun could not be made"
        # stdout and stderr reopened by path, on that namespace's mounts
        # (and the working directory: nsenter's --wd would be the host's)
        return ["nsenter", f"--mount=/proc/{self.holder.pid}/ns/mnt", "sh", "-c",
                f"cd {shlex.quote(str(self.bundle))} && "  # type: ignore[attr-defined]
                "o=$(readlink /proc/$$/fd/1) && e=$(readlink /proc/$$/fd/2) && "
                "exec \"$0\" \"$@\" >>\"$o\" 2>>\"$e\"", *cmd]

    def destroy(self) -> None:
        super().destroy()  # type: ignore[misc]
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
            self.holder = None


class CrunContainer(CrunMixin, Container):
    pass


class CrunTcpContainer(CrunMixin, TcpContainer):
    pass


def crun_running(c: Container) -> Iterator[Container]:
    crun, why = built()
    if crun is None:
        pytest.skip(f"no crun with CRIU support: {why}")
    c.RUNTIME = str(crun)
    yield from running(c)


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    yield from crun_running(CrunContainer(tmp_path))


@pytest.fixture
def tcp_container(tmp_path: Path) -> Iterator[Container]:
    yield from crun_running(CrunTcpContainer(tmp_path))


def restore(c: Container, *extra: str) -> None:
    c.runc("restore", "--detach", *extra, "--image-path", str(c.base / "img"),
           "--work-path", str(c.base / "work"), c.name)


def test_crun_round_trip(container: Container) -> None:
    """crun checkpoint, crun restore --detach: the counter goes on, exec
    works in the restored container."""
    c = container
    p = checkpoint(c)
    assert p.returncode == 0, p.stderr
    before = c.count()
    assert c.status() in ("stopped", "gone")
    restore(c)
    assert c.status() == "running" and c.counting()
    assert c.count() > before, "the counter restarted"
    cmdline = c.runc("exec", c.name, "cat", "/proc/1/cmdline").stdout
    assert "/tmp/count" in cmdline, cmdline


def test_crun_leave_running(container: Container) -> None:
    """--leave-running: it counts on; after kill and delete, the restore
    goes on from the checkpoint's value."""
    c = container
    p = checkpoint(c, "--leave-running")
    assert p.returncode == 0, p.stderr
    assert c.status() == "running" and c.counting(), "the container stopped"
    before = c.count()
    c.destroy()
    assert c.status() == "gone"
    restore(c)
    assert c.status() == "running" and c.counting()
    assert c.count() > 0


def test_crun_tcp(tcp_container: TcpContainer) -> None:
    """--tcp-established through libcriu: the stream goes on, each number once."""
    c = tcp_container
    assert isinstance(c, TcpContainer)
    assert growing(c, 5), "the connection carries nothing"
    p = checkpoint(c, "--tcp-established")
    assert p.returncode == 0, p.stderr
    before = c.check_stream("at the checkpoint")
    restore(c, "--tcp-established")
    assert c.status() == "running" and c.counting()
    assert growing(c, before + 5), "the restored connection carries nothing"
    c.check_stream("after the restore")


def test_crun_pre_dump(container: Container) -> None:
    """crun checkpoint --pre-dump (SINGLE_PRE_DUMP, no option but the
    directories), then --parent-path ../A, then restore: as runc's."""
    pre_dump_then_parent(container, "--detach")
