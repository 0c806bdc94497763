#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark TCP connections: dump and restore (--tcp-established) a task
holding N loopback connections, both ends its own
(build/test/bench/inet_bench), by the wall clock; the same task with no
connection is the reference, measured in the same run, and the difference
divided by N the cost of one connection. Reports figures, asserts nothing
but that criu succeeded.

    test/bench/inet_bench.py [--criu PATH] [--runs 3] N ...
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

TARGET = str(buildpaths.build_dir() / "test" / "bench" / "inet_bench")
TCP = ["--tcp-established"]


def one(criu, n, work):
    """(dump, restore) seconds for one task with n connections."""
    return time_round_trip(criu, [TARGET, str(n)], work, TCP)


def best(criu, n, runs, work):
    times = [one(criu, n, work) for _ in range(runs)]
    return min(d for d, _ in times), min(r for _, r in times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--criu", default=str(buildpaths.criu()))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("sizes", nargs="+", type=int, help="N connections")
    args = ap.parse_args()
    # restored tasks are reparented to us: reap them
    become_subreaper()
    work = tempfile.mkdtemp(prefix="inet_bench.")
    try:
        d0, r0 = best(args.criu, 0, args.runs, work)
        print(f"no connection (reference): dump {d0 * 1000:.1f} ms, restore {r0 * 1000:.1f} ms")
        for n in args.sizes:
            d, r = best(args.criu, n, args.runs, work)
            print(f"{n} connections: dump {d * 1000:.1f} ms "
                  f"({(d - d0) * 1e6 / n:.0f} us a connection), restore {r * 1000:.1f} ms "
                  f"({(r - r0) * 1e6 / n:.0f} us a connection) (best of {args.runs})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
