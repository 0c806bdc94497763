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
import sys
import tempfile

# the modules the tests and benchmarks share (test/zdtm), and roundtrip.py here
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zdtm"))
sys.path.insert(0, HERE)
import buildpaths  # noqa: E402
from reap import become_subreaper  # noqa: E402
from roundtrip import time_round_trip  # noqa: E402

TARGET = str(buildpaths.build_dir() / "test" / "bench" / "files_bench")


def one(criu, n, kids, work):
    return time_round_trip(criu, [TARGET, str(n), str(kids)], work)


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
