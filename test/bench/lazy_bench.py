#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Lazy restore (Documentation/lazy-pages.md): time until the tree runs.
For each size (MiB of written anonymous memory of a python process),
dumped once and restored twice from the same images (in the page cache):
  - full: criu restore -d, until it returns (the tree runs);
  - lazy: criu restore -d --lazy-pages with criu lazy-pages serving the
    images: until the restore returns, then until the daemon exits
    (every page in), and the pages it served on fault and in the
    background (the process sleeps: few faults).

    test/bench/lazy_bench.py [--build-dir build] [MiB ...]   (default 256)

Run as root, from the repository. Asserts nothing but that every criu
succeeded.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
HOLDER = """
import os, sys, time
b = bytearray(os.urandom(1 << 20)) * int(sys.argv[2])
open(sys.argv[1], 'w').write('1')
time.sleep(3600)
"""


def run(*cmd: str) -> None:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")


def kill_reap(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def bench(criu: str, work: Path, mib: int) -> str:
    img = work / f"img-{mib}"
    img.mkdir()
    ready = work / "ready"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ready), str(mib)],
                              start_new_session=True, stdin=subprocess.DEVNULL)
    while not ready.exists():
        time.sleep(0.05)
    ready.unlink()
    run(criu, "dump", "-t", str(holder.pid), "-D", str(img), "-o", "dump.log")
    holder.wait()
    t0 = time.monotonic()
    run(criu, "restore", "-D", str(img), "-d", "-o", "full.log", "--pidfile", "full.pid")
    full = time.monotonic() - t0
    kill_reap(int((img / "full.pid").read_text()))
    rfd, wfd = os.pipe()
    daemon = subprocess.Popen([criu, "lazy-pages", "-D", str(img), "-o", "lazy.log", "-v4",
                               "--status-fd", str(wfd)], pass_fds=(wfd,))
    os.close(wfd)
    os.read(rfd, 1)
    os.close(rfd)
    t0 = time.monotonic()
    run(criu, "restore", "-D", str(img), "-d", "-o", "lazy-restore.log", "--pidfile",
        "lazy.pid", "--lazy-pages")
    lazy = time.monotonic() - t0
    daemon.wait()
    done = time.monotonic() - t0
    kill_reap(int((img / "lazy.pid").read_text()))
    m = re.search(r"(\d+) page\(s\) served on fault, (\d+) in the background",
                  (img / "lazy.log").read_text())
    fault, bg = m.groups() if m else ("?", "?")
    return f"{mib:6d} {full * 1000:10.0f} {lazy * 1000:10.0f} {done * 1000:13.0f} " \
           f"{fault:>9} {bg:>11}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("sizes", nargs="*", type=int, default=[256])
    a = ap.parse_args()
    criu = str(Path(a.build_dir, "criu", "criu").resolve())
    # restored trees are ours to reap
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    print(f"{'MiB':>6} {'full_ms':>10} {'lazy_ms':>10} {'all_pages_ms':>13} "
          f"{'on_fault':>9} {'background':>11}")
    with tempfile.TemporaryDirectory(prefix="bench-lazy.") as work:
        for mib in a.sizes:
            print(bench(criu, Path(work), mib), flush=True)


if __name__ == "__main__":
    main()
