"""contrib/migrate/criu_migrate.py between two "hosts": network namespaces
made by the test, joined by a veth pair (10.78.0.1 and 10.78.0.2); host b
has a mount namespace too, with a tmpfs of its own on the destination's
images directory, which host a can't see (nothing goes there but through
the page servers' connections). The
tree (static/ns_pid_tree, a pid namespace of its own, so that its restore
while the source is still frozen takes no pid the source holds) starts on
host a, where the migration runs; the page servers and the restore run on
host b (through --to "nsenter --net=B").

- A TCP connection to a peer on a third "host" moves with a tree that has
  its own network namespace; a runc container moves by its id; --tls.
- The migration: pre-dump rounds, each printed, the last through the final
  dump, whose post-dump action restores on b; the tree runs there (in b's
  network namespace), none of it is left on a, and its own check passes.
- A failure at each step leaves the tree running on a as it was, and no
  checkpoint at b: the source's criu killed in the first round; the page
  server killed in the first round, or on the final dump's commit; the
  restore on b failing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

import buildpaths
import zdtm
from test_inet_sk import PEER, start_peer, veth_once_unshared
from test_net import Netns, tool
from test_pagesrv_tls import make_ca, make_cert
from test_rpc_runc import Container, running

pytestmark = pytest.mark.usefixtures("need_criu")

PROGRAM = "ns_pid_tree"
MIGRATE = buildpaths.ROOT / "contrib" / "migrate" / "criu_migrate.py"


@dataclass
class Hosts:
    a: Netns
    b: Netns
    dst: Path           # the images directory on b, a tmpfs only b sees

    def there(self, *parts: str) -> Path:
        """A path under dst as b sees it."""
        return self.b.view(self.dst.joinpath(*parts))


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[Hosts]:
    missing = [t for t in ("ip", "nsenter", "unshare") if not tool(t)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    dst = tmp_path / "dst"
    dst.mkdir()
    a = Netns()
    try:
        b = Netns(private=dst)
    except BaseException:
        a.close()
        raise
    try:
        a.sh(f"ip link add mga type veth peer name mgb netns {b.proc.pid} && "
             "ip addr add 10.78.0.1/24 dev mga && ip link set mga up && ip link set lo up")
        b.sh("ip addr add 10.78.0.2/24 dev mgb && ip link set mgb up && ip link set lo up")
        yield Hosts(a, b, dst)
    finally:
        a.close()
        b.close()


def enter(n: Netns) -> list[str]:
    """Into n's network namespace, and its mount namespace where it has one."""
    cmd = [tool("nsenter") or "nsenter", f"--net={n.path}"]
    if os.stat(f"/proc/{n.proc.pid}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino:
        cmd.append(f"--mount=/proc/{n.proc.pid}/ns/mnt")
    return cmd


def migrate(r: zdtm.Run, h: Hosts, env: dict[str, str] | None = None,
            to: Path | None = None, extra: list[str] = []) -> subprocess.CompletedProcess[str]:
    cmd = enter(h.a) + [sys.executable, str(MIGRATE), "-t", str(r.pid), "--address",
                        "10.78.0.2", "--to", str(to) if to else " ".join(enter(h.b)),
                        "--src-dir", str(r.dir / "src"), "--dst-dir", str(h.dst), "--criu",
                        zdtm.CRIU, "--dst-criu", zdtm.CRIU, "--max-rounds", "3",
                        "--min-pages", "0"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    r.note(f"criu-migrate -> {p.returncode}")
    return p


def test_migrate(hosts: Hosts) -> None:
    h = hosts
    with zdtm.Run(PROGRAM, "migrate", pidns=True) as r:
        r.start_prefix = enter(h.a)
        r.start()
        old = r.pid
        p = migrate(r, h)
        if p.returncode:
            r.fail(f"criu-migrate failed:\n{p.stdout}\n{p.stderr}")
        rounds = [ln for ln in p.stdout.splitlines() if ln.startswith("criu-migrate: round ")]
        if not rounds or "MiB/s" not in rounds[0] or "final dump" not in p.stdout:
            r.fail(f"no progress report per round:\n{p.stdout}")
        pid = int((h.there("final", "restore.pid")).read_text())
        if f"root pid {pid}" not in p.stdout:
            r.fail(f"the restored root's pid is not reported:\n{p.stdout}")
        if zdtm.proc_state(old) not in (None, "Z", "X"):
            r.fail(f"the source tree {old} is still there")
        if os.readlink(f"/proc/{pid}/ns/net") != f"net:[{h.b.ino}]":
            r.fail("the restored tree is not on host b")
        if not os.path.islink(h.there("final", "parent")):
            r.fail("the final dump is not linked to the last pre-dump")
        if any(h.dst.iterdir()):
            r.fail(f"host a sees images in {h.dst}: b's view is not its own")
        r.pid = pid
        r.alive = r.ours = True
        r.finish()


@pytest.mark.parametrize("case", ["source-round1", "server-round1", "server-final",
                                  "restore"])
def test_migrate_fails_safe(hosts: Hosts, case: str) -> None:
    h = hosts
    with zdtm.Run(PROGRAM, f"migrate-{case}", pidns=True) as r:
        r.start_prefix = enter(h.a)
        r.start()
        snap = r.snapshot()
        env = dict(os.environ)
        to = None
        if case == "source-round1":
            env["CRIU_FAULT"] = "memory"       # the source's criu killed in its round
            says = "pre-dump round1 failed (criu -9"
        elif case == "server-round1":
            env["CRIU_FAULT"] = "pagesrv-frame#3"
            says = "pre-dump round1 failed"
        elif case == "server-final":
            # only the final round's page server is killed, on its commit
            to = r.dir / "to-b"
            to.write_text("#!/bin/sh\ncase \"$*\" in *dst/final*) "
                          "export CRIU_FAULT=pagesrv-commit ;; esac\n"
                          f"exec {' '.join(enter(h.b))} \"$@\"\n")
            to.chmod(0o755)
            says = "dump final failed (criu 1, page server -9"
        else:
            # the restore on b fails once the tree is there: its pid file
            # can't be written (a directory stands in its place)
            (h.there("final", "restore.pid")).mkdir(parents=True)
            says = "dump final failed (criu 1, page server 1"
        p = migrate(r, h, env=env, to=to)
        if says not in p.stdout:
            r.fail(f"criu-migrate does not say {says!r}:\n{p.stdout}\n{p.stderr}")
        if p.returncode != 1 or "the tree runs on" not in p.stdout:
            r.fail(f"criu-migrate did not fail safely ({p.returncode}):\n{p.stdout}\n"
                   f"{p.stderr}")
        r.check_running(f"after the failed migration ({case})", snap)
        if (h.there("final", "inventory.img")).exists():
            r.fail("a checkpoint is left at the destination")
        if case == "restore" and "Error" not in \
                h.there("final", "restore.log").read_text():
            r.fail("the restore on b did not run and fail")
        r.finish()


def test_migrate_needs_a_tree() -> None:
    p = subprocess.run([sys.executable, str(MIGRATE), "--address", "10.0.0.1", "--src-dir",
                        "/nonexistent", "--dst-dir", "/nonexistent"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "-t/--tree" in p.stderr, p


def test_migrate_tls(hosts: Hosts, tmp_path: Path) -> None:
    """--tls: every round's page server connection is TLS (both logs say
    so), each side with its own certificate; the tree runs on b."""
    if not tool("openssl"):
        pytest.skip("openssl is not installed (scripts/install-deps.sh installs it)")
    make_ca(tmp_path, "ca")
    make_cert(tmp_path, "b", "ca", "IP:10.78.0.2")
    make_cert(tmp_path, "a", "ca", "DNS:zdtm-client")
    h = hosts
    with zdtm.Run(PROGRAM, "migrate-tls", pidns=True) as r:
        r.start_prefix = enter(h.a)
        r.start()
        old = r.pid
        ca = str(tmp_path / "ca.pem")
        p = migrate(r, h, extra=[
            "--tls", "--tls-cacert", ca, "--tls-cert", str(tmp_path / "a.pem"),
            "--tls-key", str(tmp_path / "a-key.pem"), "--dst-tls-cert",
            str(tmp_path / "b.pem"), "--dst-tls-key", str(tmp_path / "b-key.pem")])
        if p.returncode:
            r.fail(f"criu-migrate --tls failed:\n{p.stdout}\n{p.stderr}")
        rounds = sorted(d.name for d in (r.dir / "src").iterdir() if d.is_dir())
        if "final" not in rounds or len(rounds) < 2:
            r.fail(f"no rounds and final dump in {r.dir / 'src'}: {rounds}")
        for name in rounds:
            for log in (r.dir / "src" / name / "dump.log", h.there(name, "ps.log")):
                if "TLS: (TLS" not in log.read_text(errors="replace"):
                    r.fail(f"{log} logged no TLS session: not encrypted?\n{zdtm.tail(log)}")
        pid = int((h.there("final", "restore.pid")).read_text())
        if zdtm.proc_state(old) not in (None, "Z", "X"):
            r.fail(f"the source tree {old} is still there")
        r.pid = pid
        r.alive = r.ours = True
        r.finish()


def test_migrate_tls_options_need_tls() -> None:
    p = subprocess.run([sys.executable, str(MIGRATE), "-t", "1", "--address", "10.0.0.1",
                        "--src-dir", "/nonexistent", "--dst-dir", "/nonexistent",
                        "--tls-cert", "x.pem"], capture_output=True, text=True)
    assert p.returncode == 2 and "need --tls" in p.stderr, p


@pytest.fixture
def runc_container(tmp_path: Path) -> Iterator[Container]:
    yield from running(Container(tmp_path))


def test_migrate_runc(runc_container: Container) -> None:
    """--runc ID: pre-dump rounds through runc, the final one with the
    container paused, the restore by runc under another runc root, from a
    bundle of the destination's (the same root, its own cgroup); the
    container runs there, counting on, and is gone at the source."""
    c = runc_container
    dst_root, bundle = c.base / "state-b", c.base / "bundle-b"
    bundle.mkdir()
    spec = json.loads((c.bundle / "config.json").read_text())
    spec["root"]["path"] = str(c.bundle / "rootfs")
    spec["linux"]["cgroupsPath"] = f"/zdtm-migrated-{os.getpid()}"
    (bundle / "config.json").write_text(json.dumps(spec))
    env = dict(os.environ, PATH=f"{c.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    cmd = [sys.executable, str(MIGRATE), "--runc", c.name, "--runtime", str(c.RUNTIME),
           "--runtime-root", str(c.state), "--dst-runtime-root", str(dst_root),
           "--dst-bundle", str(bundle), "--address", "127.0.0.1", "--src-dir",
           str(c.base / "src"), "--dst-dir", str(c.base / "dst"), "--criu", zdtm.CRIU,
           "--dst-criu", zdtm.CRIU, "--max-rounds", "2", "--min-pages", "0"]
    there = Container(c.base)
    there.state, there.bundle = dst_root, bundle
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300,
                           cwd=c.bundle)
        assert p.returncode == 0, f"criu-migrate --runc failed:\n{p.stdout}\n{p.stderr}"
        assert "round 1:" in p.stdout and "final dump" in p.stdout, p.stdout
        assert "runs on the destination" in p.stdout, p.stdout
        assert c.status() == "gone", "the container is still there at the source"
        assert there.status() == "running", "the container does not run at the destination"
        before = c.count()
        assert c.counting() and c.count() > before, "the migrated counter does not count"
        assert (c.base / "dst" / "final" / "descriptors.json").exists()
    finally:
        there.destroy()


def test_migrate_runc_fails_safe(runc_container: Container) -> None:
    """The restore at the destination fails (its bundle has no config.json):
    the container is resumed at the source and counts on."""
    c = runc_container
    env = dict(os.environ, PATH=f"{c.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    (c.base / "bundle-b").mkdir()
    cmd = [sys.executable, str(MIGRATE), "--runc", c.name, "--runtime", str(c.RUNTIME),
           "--runtime-root", str(c.state), "--dst-runtime-root", str(c.base / "state-b"),
           "--dst-bundle", str(c.base / "bundle-b"), "--address", "127.0.0.1", "--src-dir",
           str(c.base / "src"), "--dst-dir", str(c.base / "dst"), "--criu", zdtm.CRIU,
           "--dst-criu", zdtm.CRIU, "--max-rounds", "1", "--min-pages", "0"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300,
                       cwd=c.bundle)
    assert p.returncode == 1, f"criu-migrate did not fail:\n{p.stdout}\n{p.stderr}"
    assert "the restore on the destination failed" in p.stdout, p.stdout
    assert "the tree runs on at the source" in p.stdout, p.stdout
    assert c.status() == "running" and c.counting(), "the container did not go on"


@pytest.fixture
def lan(hosts: Hosts) -> Iterator[tuple[Hosts, Netns]]:
    """hosts, and a peer: a third namespace whose bridge br0 (10.55.0.1)
    has a port to a bridge br0 on each host; a tree's veth on a host joins
    that host's br0, so that the tree (10.55.0.2) reaches the peer from
    either host."""
    h = hosts
    p = Netns()
    try:
        p.sh("ip link add br0 type bridge && ip addr add 10.55.0.1/24 dev br0 && "
             "ip link set br0 up")
        for n, up in ((h.a, "upa"), (h.b, "upb")):
            n.sh("ip link add br0 type bridge && ip link set br0 up && "
                 f"ip link add {up} type veth peer name p{up} netns {p.proc.pid} && "
                 f"ip link set {up} master br0 up")
            p.sh(f"ip link set p{up} master br0 up")
        yield h, p
    finally:
        p.close()


def test_migrate_tcp_peer(lan: tuple[Hosts, Netns]) -> None:
    """A tree with a network namespace of its own (a pid namespace too) and a
    TCP connection to a peer in a third namespace moves from a to b with
    --tcp-established, its veth's outer end made in b's bridge; both ends
    check every byte of both streams across the move."""
    h, peer_ns = lan
    with zdtm.Run("sk_inet_peer", "migrate-tcp", pidns=True) as r:
        peer = start_peer(r, PEER, "10.55.0.1", 5601, enter(peer_ns))
        try:
            r.start_prefix = enter(h.a) + [tool("unshare") or "unshare", "-n"]
            t = threading.Thread(target=veth_once_unshared, args=(r, h.a))
            t.start()
            r.start()
            t.join()
            old = r.pid
            p = migrate(r, h, extra=["--dump-opt=--tcp-established",
                                     "--restore-opt=--tcp-established",
                                     "--restore-opt=--external",
                                     "--restore-opt=veth[eth0]:vh0@br0"])
            if p.returncode:
                r.fail(f"criu-migrate failed:\n{p.stdout}\n{p.stderr}")
            pid = int(h.there("final", "restore.pid").read_text())
            if zdtm.proc_state(old) not in (None, "Z", "X"):
                r.fail(f"the source tree {old} is still there")
            if "vh0" not in h.b.links():
                r.fail(f"no vh0 on b: {h.b.links()}")
            r.pid = pid
            r.alive = r.ours = True
            r.finish()
            out, err = peer.communicate(timeout=60)
            if peer.returncode != 0 or out.strip() != "peer ok":
                r.fail(f"the peer: {out}{err}")
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()
