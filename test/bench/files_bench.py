#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark open files: dump and restore a tree of KIDS+1 tasks, each with
N eventfds of its own (build/test/bench/files_bench), by the wall clock.
Reports figures, asserts nothing but that criu succeeded.

    test/bench/files_bench.py [--criu PATH] [--runs 3] N:KIDS ...
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# test/zdtm holds the modules the tests and benchmarks share
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zdtm"))
import buildpaths  # noqa: E402
from reap import become_subreaper, reap_leftovers  # noqa: E402

TARGET = str(buildpaths.build_dir() / "test" / "bench" / "files_bench")


def one(criu, n, kids, work):
    img = os.path.join(work, "img")
    shutil.rmtree(img, ignore_errors=True)
    os.mkdir(img, 0o700)
    ready = os.path.join(work, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen([TARGET, str(n), str(kids), ready], stdin=subprocess.DEVNULL,
                         start_new_session=True)
    while not os.path.exists(ready):
        if p.poll() is not None:
            sys.exit(f"files_bench exited with {p.returncode}")
        time.sleep(0.05)
    t = time.monotonic()
    subprocess.run([criu, "dump", "-t", str(p.pid), "-D", img, "-o", "dump.log"], check=True)
    dump = time.monotonic() - t
    p.wait()
    time.sleep(0.2)
    reap_leftovers()
    t = time.monotonic()
    subprocess.run([criu, "restore", "-D", img, "-d", "-o", "restore.log"], check=True)
    restore = time.monotonic() - t
    os.killpg(p.pid, signal.SIGKILL)
    time.sleep(0.2)
    reap_leftovers()
    return dump, restore


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--criu", default=str(buildpaths.criu()))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("sizes", nargs="+", help="N:KIDS")
    args = ap.parse_args()
    # restored tasks are reparented to us: reap them
    become_subreaper()
    work = tempfile.mkdtemp(prefix="files_bench.")
    try:
        for size in args.sizes:
            n, kids = (int(x) for x in size.split(":"))
            times = [one(args.criu, n, kids, work) for _ in range(args.runs)]
            print(f"{n} eventfds x {kids + 1} tasks: dump "
                  f"{min(d for d, _ in times):.3f} s, restore "
                  f"{min(r for _, r in times):.3f} s (best of {args.runs})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
