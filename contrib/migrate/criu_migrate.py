#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""criu-migrate: move a process tree to another host, live.

    criu_migrate.py -t PID --address DST_IP --to "ssh root@dst" \\
        --src-dir /var/tmp/mig --dst-dir /var/tmp/mig [--max-rounds 8] \\
        [--dump-opt=--tcp-established --restore-opt=--tcp-established] \\
        [--tls --tls-cacert CA --tls-cert CERT --tls-key KEY [--dst-tls-cert ...]]

Rounds of `criu pre-dump --track-mem` send the tree's memory to a page
server started on the destination (through the --to command, e.g. ssh;
empty: this host), each round only what was written since the previous
one, until a round stops shrinking (by --shrink), falls under --min-pages
or --max-rounds is reached. The final `criu dump` sends the rest and, with
the tree still frozen (criu's post-dump action script, which this program
writes), restores it on the destination. The source tree is killed only once that
restore succeeded; if anything fails before, the dump fails and the tree
runs on at the source as it was (the restore leaves nothing behind at the
destination, the page server removes a checkpoint that was not completed).
`--runc ID` moves a runc (or crun) container instead, through the
runtime's own checkpoint and restore (RuncMigration). Each round prints its
pages, time and rate. With --tls every page server
connection is TLS (criu's --tls options, on both sides). Exit 0: the tree runs on the
destination (its root's pid there is printed); 1: it runs at the source.
Documentation/migrate.md says more.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "crit"))
import crit  # noqa: E402

PAGE = 4096


class Failed(Exception):
    """A step failed; the tree runs on at the source."""


def say(msg: str) -> None:
    print(f"criu-migrate: {msg}", flush=True)


def dump_stat(stats: Path, field: str) -> int:
    """A field of CRIU's stats-dump's dump_stats_entry: frozen_time (us) or
    pages_written."""
    try:
        doc = crit.read_image(stats)
    except crit.CritError as e:
        raise Failed(f"{stats}: {e}") from None
    return int(doc["entry"].get("dump", {}).get(field, 0))


def write_hook(path: Path, restore: list[str]) -> None:
    """criu's action script for the final dump: at post-dump (the tree
    frozen, its images committed at the destination), the restore there.
    A shell script: it runs while the tree is frozen, where every ms is
    downtime (a Python start costs a hundred)."""
    path.write_text("#!/bin/sh\n"
                    "# criu_migrate.py: the final dump's post-dump action\n"
                    "[ \"$CRTOOLS_SCRIPT_ACTION\" = post-dump ] || exit 0\n"
                    f"exec {shlex.join(restore)} </dev/null\n")
    path.chmod(0o700)


class Migration:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.to = shlex.split(a.to)
        self.src = Path(a.src_dir)
        self.dst = a.dst_dir.rstrip("/")

    def tls(self, side: str) -> list[str]:
        """The TLS options of criu on one side: "" the source, "dst_" the
        destination (its files default to the source's paths)."""
        if not self.a.tls:
            return []
        opts = ["--tls"]
        for f in ("cacert", "cert", "key"):
            path = getattr(self.a, f"{side}tls_{f}", None) or getattr(self.a, f"tls_{f}")
            if path:
                opts += [f"--tls-{f}", path]
        return opts

    def remote(self, *cmd: str) -> list[str]:
        return self.to + [self.a.dst_criu, *cmd]

    def server(self, name: str, prev: Optional[str]) -> tuple[subprocess.Popen[str], int]:
        """A page server on the destination for round @name; its port."""
        d = f"{self.dst}/{name}"
        subprocess.run(self.to + ["mkdir", "-p", d], check=True)
        cmd = self.remote("page-server", "-D", d, "--port", str(self.a.port), "--address",
                          self.a.address, "-o", "ps.log", "-v4")
        if prev:
            cmd += ["--prev-images-dir", f"../{prev}"]
        cmd += self.tls("dst_")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        assert p.stdout is not None
        line = p.stdout.readline().strip()
        if not line.isdigit():
            p.kill()
            p.wait()
            raise Failed(f"the page server for {name} did not start (see {d}/ps.log)")
        return p, int(line)

    def round_cmd(self, cmd: str, local: Path, prev: Optional[str], port: int) -> list[str]:
        """The source's command of a round: criu @cmd through the page server."""
        args = [self.a.criu, cmd, "-t", str(self.a.tree), "-D", str(local), "-o", "dump.log",
                "-v4", "--track-mem", "--page-server", "--address", self.a.address, "--port",
                str(port)] + self.tls("") + self.a.dump_opt
        if prev:
            args += ["--prev-images-dir", f"../{prev}"]
        return args

    def dump(self, cmd: str, name: str, prev: Optional[str],
             extra: list[str], env: Optional[dict[str, str]] = None) -> tuple[int, float]:
        """One round (@cmd pre-dump or dump) through a page server: pages, seconds."""
        srv, port = self.server(name, prev)
        local = self.src / name
        local.mkdir(parents=True, exist_ok=True)
        args = self.round_cmd(cmd, local, prev, port) + extra
        t0 = time.monotonic()
        rc = subprocess.run(args, stdin=subprocess.DEVNULL, env=env).returncode
        took = time.monotonic() - t0
        try:
            src = srv.wait(timeout=120)
        except subprocess.TimeoutExpired:
            srv.kill()
            src = srv.wait()
        if rc or src:
            raise Failed(f"{cmd} {name} failed (criu {rc}, page server {src}; see "
                         f"{local}/dump.log and {self.dst}/{name}/ps.log)")
        return dump_stat(local / "stats-dump", "pages_written"), took

    def report(self, what: str, pages: int, took: float) -> None:
        mib = pages * PAGE / (1 << 20)
        say(f"{what}: {pages} pages ({mib:.1f} MiB) in {took:.2f} s, "
            f"{mib / max(took, 1e-6):.1f} MiB/s")

    def run(self) -> int:
        prev: Optional[str] = None
        last = -1
        for i in range(1, self.a.max_rounds + 1):
            name = f"round{i}"
            pages, took = self.dump("pre-dump", name, prev, [])
            self.report(f"round {i}", pages, took)
            prev = name
            if pages < self.a.min_pages or (last >= 0 and pages > last * self.a.shrink):
                break
            last = pages
        return self.final(prev)

    def final(self, prev: Optional[str]) -> int:
        """The final dump, whose post-dump action restores on the destination."""
        hook = self.src / "post-dump.sh"
        self.src.mkdir(parents=True, exist_ok=True)
        write_hook(hook, self.remote("restore", "-D", f"{self.dst}/final", "-d", "-o",
                                     "restore.log", "-v4", "--pidfile",
                                     f"{self.dst}/final/restore.pid") + self.a.restore_opt)
        pages, took = self.dump("dump", "final", prev, ["--action-script", str(hook)])
        self.report("final dump", pages, took)
        frozen = dump_stat(self.src / "final" / "stats-dump", "frozen_time") / 1000
        say(f"downtime: the tree was frozen {frozen:.1f} ms, the restore there included")
        pid = subprocess.run(self.to + ["cat", f"{self.dst}/final/restore.pid"],
                             capture_output=True, text=True).stdout.strip()
        say(f"the tree runs on the destination, its root pid {pid}")
        return 0


class RuncMigration(Migration):
    """A runc (or crun) container by its id: the rounds are the runtime's
    `checkpoint --pre-dump --page-server`; the final round pauses the
    container (its freezer), checkpoints it --leave-running (it stays
    paused), hands the runtime's descriptors.json to the destination and
    restores there with the runtime; the container at the source is killed
    only once that restore succeeded, and resumed if anything failed. The
    destination's bundle (its config.json, its root) is the caller's."""

    def runtime(self, *args: str, remote: bool = False) -> list[str]:
        if remote:
            return self.to + [self.a.dst_runtime, "--root", self.a.dst_runtime_root, *args]
        return [self.a.runtime, "--root", self.a.runtime_root, *args]

    def round_cmd(self, cmd: str, local: Path, prev: Optional[str], port: int) -> list[str]:
        args = self.runtime("checkpoint", "--page-server", f"{self.a.address}:{port}",
                            "--image-path", str(local), "--work-path", str(local))
        if cmd == "pre-dump":
            args.append("--pre-dump")
        else:
            args.append("--leave-running")      # paused: resumed or killed after
        if prev:
            args += ["--parent-path", f"../{prev}"]
        return args + self.a.dump_opt + [self.a.runc]

    def step(self, what: str, cmd: list[str], stdin: Optional[Path] = None) -> None:
        with open(stdin or "/dev/null", "rb") as f:
            p = subprocess.run(cmd, stdin=f, capture_output=True, text=True)
        if p.returncode:
            raise Failed(f"{what} failed ({p.returncode}): {p.stderr.strip()[-500:]}")

    def final(self, prev: Optional[str]) -> int:
        t0 = time.monotonic()
        self.step("pausing the container", self.runtime("pause", self.a.runc))
        try:
            pages, took = self.dump("dump", "final", prev, [])
            self.report("final dump", pages, took)
            desc = self.src / "final" / "descriptors.json"
            there = f"{self.dst}/final"
            self.step("handing descriptors.json over",
                      self.to + ["sh", "-c", 'cat > "$0"', f"{there}/descriptors.json"], desc)
            self.step("the restore on the destination",
                      self.runtime("restore", "-d", "--image-path", there, "--work-path", there,
                                   "--bundle", self.a.dst_bundle, *self.a.restore_opt,
                                   self.a.runc, remote=True))
        except BaseException:
            subprocess.run(self.runtime("resume", self.a.runc), capture_output=True)
            raise
        downtime = (time.monotonic() - t0) * 1000
        subprocess.run(self.runtime("kill", self.a.runc, "KILL"), capture_output=True)
        subprocess.run(self.runtime("delete", "-f", self.a.runc), capture_output=True)
        say(f"downtime: the container was paused {downtime:.1f} ms, the restore there "
            "included")
        say(f"the container {self.a.runc} runs on the destination")
        return 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="criu-migrate", description=__doc__.split("\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("-t", "--tree", type=int, help="the root of the tree")
    which.add_argument("--runc", metavar="ID", help="a runc (or crun) container's id")
    p.add_argument("--runtime", default="runc", help="--runc: the runtime here")
    p.add_argument("--runtime-root", default="/run/runc",
                   help="--runc: the runtime's --root here")
    p.add_argument("--dst-runtime", default=None, help="--runc: the runtime there")
    p.add_argument("--dst-runtime-root", default=None, help="--runc: its --root there")
    p.add_argument("--dst-bundle", default=None,
                   help="--runc: the container's bundle there (config.json and root)")
    p.add_argument("--address", required=True,
                   help="the destination's address, as this host reaches it")
    p.add_argument("--port", type=int, default=0, help="the page servers' port (0: any)")
    p.add_argument("--to", default="",
                   help="the command prefix that runs a command on the destination")
    p.add_argument("--src-dir", required=True, help="this host's work directory")
    p.add_argument("--dst-dir", required=True, help="the images directory there")
    p.add_argument("--criu", default="criu")
    p.add_argument("--dst-criu", default="criu", help="criu on the destination")
    p.add_argument("--max-rounds", type=int, default=8)
    p.add_argument("--min-pages", type=int, default=1024,
                   help="a pre-dump round writing fewer pages is the last")
    p.add_argument("--shrink", type=float, default=0.9,
                   help="the rounds go on while each writes under this share of the last")
    p.add_argument("--tls", action="store_true",
                   help="TLS on every page server connection (criu's --tls)")
    for f, what in (("cacert", "the CA certificate"), ("cert", "the certificate"),
                    ("key", "the private key")):
        p.add_argument(f"--tls-{f}", help=f"{what} of this host (criu's --tls-{f})")
        p.add_argument(f"--dst-tls-{f}",
                       help=f"{what} of the destination (default: --tls-{f}'s path)")
    p.add_argument("--dump-opt", action="append", default=[])
    p.add_argument("--restore-opt", action="append", default=[])
    a = p.parse_args(argv)
    if a.max_rounds < 1:
        p.error("--max-rounds must be at least 1")
    if a.runc:
        if a.tls:
            p.error("--tls is not for --runc: the runtime has no TLS options")
        if not a.dst_bundle:
            p.error("--runc needs --dst-bundle")
        a.dst_runtime = a.dst_runtime or a.runtime
        a.dst_runtime_root = a.dst_runtime_root or a.runtime_root
    if not a.tls and any(getattr(a, f"{side}tls_{f}") for side in ("", "dst_")
                         for f in ("cacert", "cert", "key")):
        p.error("the --tls-* options need --tls")
    return a


def main(argv: list[str]) -> int:
    a = parse(argv)
    try:
        return (RuncMigration(a) if a.runc else Migration(a)).run()
    except (Failed, OSError, subprocess.CalledProcessError) as e:
        say(f"{e}; the tree runs on at the source")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
