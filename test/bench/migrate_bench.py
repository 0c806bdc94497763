#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Live migration's downtime (issue 16): a process of SIZE MiB of anonymous
memory writing RATE MiB/s of random pages (predump_writer, as the init of
a pid namespace of its own, so that its copy can start while it still
holds its pids) moved over loopback through page servers, two ways:
  (a) stop and copy: criu dump --page-server, then criu restore;
  (b) criu_migrate.py: pre-dump rounds, then the final dump, which
      restores from its post-dump action.
For each: the downtime (the tree frozen until its copy runs: (a) the dump
and the restore; (b) the final dump's frozen time, which holds the restore),
the total time, the bytes the page servers stored, and for (b) the rounds.
Images on /dev/shm. Reports; asserts nothing but that criu worked.

    test/bench/migrate_bench.py [--build-dir build] [--sizes 256,1024] [--rate 32]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zdtm"))
from buildpaths import ROOT as REPO  # noqa: E402
from reap import become_subreaper, reap_leftovers as reap  # noqa: E402

MIGRATE = REPO / "contrib" / "migrate" / "criu_migrate.py"


def start(writer: Path, size: int, rate: float, work: Path) -> int:
    """The writer, pid 1 of a pid namespace, a session leader; its pid here."""
    ready = work / "ready"
    p = subprocess.Popen(["unshare", "-pf", "setsid", str(writer), str(size), str(rate),
                          str(work / "log"), str(ready)], stdin=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    while not ready.exists() or not ready.read_text().strip():
        time.sleep(0.01)
    kids = Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()
    return int(kids[0])


def stored(d: Path) -> int:
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file())


def kill(pidfile: Path) -> None:
    try:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass
    reap()


def stop_and_copy(criu: str, pid: int, work: Path) -> tuple[float, float, int]:
    src, dst = work / "src", work / "dst"
    src.mkdir()
    dst.mkdir()
    srv = subprocess.Popen([criu, "page-server", "-D", str(dst), "--port", "0", "--address",
                            "127.0.0.1", "-o", "ps.log"], stdout=subprocess.PIPE, text=True)
    assert srv.stdout is not None
    port = srv.stdout.readline().strip()
    t0 = time.monotonic()
    subprocess.run([criu, "dump", "-t", str(pid), "-D", str(src), "-o", "dump.log",
                    "--page-server", "--address", "127.0.0.1", "--port", port], check=True)
    srv.wait(timeout=60)
    subprocess.run([criu, "restore", "-D", str(dst), "-d", "--pidfile", "pid", "-o",
                    "restore.log"], check=True)
    down = (time.monotonic() - t0) * 1000
    kill(dst / "pid")
    return down, down, stored(dst)


def live(criu: str, pid: int, work: Path) -> tuple[float, float, int, int]:
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(MIGRATE), "-t", str(pid), "--address",
                        "127.0.0.1", "--src-dir", str(work / "src"), "--dst-dir",
                        str(work / "dst"), "--criu", criu, "--dst-criu", criu, "--min-pages",
                        "2048", "--max-rounds", "8"], capture_output=True, text=True)
    total = (time.monotonic() - t0) * 1000
    if p.returncode:
        raise RuntimeError(f"criu_migrate.py failed:\n{p.stdout}{p.stderr}")
    m = re.search(r"downtime: the tree was frozen ([0-9.]+) ms", p.stdout)
    if not m:
        raise RuntimeError(f"no downtime line:\n{p.stdout}")
    rounds = len(re.findall(r"^criu-migrate: round ", p.stdout, re.M))
    kill(work / "dst" / "final" / "restore.pid")
    return float(m.group(1)), total, stored(work / "dst"), rounds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--sizes", default="256,1024")
    ap.add_argument("--rate", type=float, default=32)
    a = ap.parse_args()
    build = Path(a.build_dir).resolve()
    criu = str(build / "criu" / "criu")
    writer = build / "test" / "bench" / "predump_writer"
    become_subreaper()
    print(f"{'MiB':>6} {'way':<16} {'downtime ms':>12} {'total ms':>10} {'stored MiB':>11} "
          f"{'rounds':>7}")
    for size in (int(s) for s in a.sizes.split(",")):
        for way in ("stop-and-copy", "pre-dump rounds"):
            work = Path(tempfile.mkdtemp(prefix="migrate_bench.", dir="/dev/shm"))
            pid = 0
            try:
                pid = start(writer, size, a.rate, work)
                time.sleep(1)
                if way == "stop-and-copy":
                    down, total, nbytes = stop_and_copy(criu, pid, work)
                    rounds = 0
                else:
                    down, total, nbytes, rounds = live(criu, pid, work)
                print(f"{size:6d} {way:<16} {down:12.1f} {total:10.1f} "
                      f"{nbytes / (1 << 20):11.1f} {rounds:7d}", flush=True)
            finally:
                if pid:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                reap()
                shutil.rmtree(work, ignore_errors=True)
    print(f"(the writer writes {a.rate:g} MiB/s of random pages; loopback, /dev/shm)")


if __name__ == "__main__":
    main()
