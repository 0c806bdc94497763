#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Dump and restore throughput by --jobs (reports figures, asserts nothing).

For each size (default 256 MiB and 1 GiB of touched anonymous memory,
test/bench/bench_mem) and each number of jobs (default 1, 2, and 4, 8, 16
where the machine has that many CPUs) it times `criu dump --jobs N` and
`criu restore --jobs N` by the wall clock (bench.py's rounds: the restored
copy checks its memory, untimed), one warm-up round then --runs measured,
and prints the medians as GiB/s beside a tmpfs write of the same size (dd to
/dev/shm) measured in the same run. Images go to /dev/shm.
"""

import argparse
import os
import shutil
import signal
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zdtm"))
import bench  # noqa: E402
import buildpaths  # noqa: E402
from reap import become_subreaper  # noqa: E402

GIB = 1 << 30


def gib_s(mib: int, ms: float) -> float:
    return mib * bench.MIB / GIB / (ms / 1e3) if ms else 0.0


def default_jobs() -> str:
    cpus = len(os.sched_getaffinity(0))
    return ",".join(str(n) for n in (1, 2, 4, 8, 16) if n <= max(cpus, 2))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=str(buildpaths.build_dir()))
    ap.add_argument("--sizes", default="256M,1G")
    ap.add_argument("--jobs-list", default=default_jobs(),
                    help="comma-separated --jobs values (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="measured rounds per point")
    args = ap.parse_args()
    ns = argparse.Namespace(criu=os.path.join(args.build_dir, "criu/criu"),
                            build_dir=args.build_dir, images_dir="/dev/shm",
                            yardsticks_only=False, jobs=None)
    if os.geteuid() != 0:
        bench.die("criu needs root")
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    become_subreaper()
    b = bench.Bench(ns)
    jobs = [int(j) for j in args.jobs_list.split(",")]
    print("criu --jobs: %d CPUs here; medians of %d rounds; GiB/s = 2^30 bytes/s"
          % (len(os.sched_getaffinity(0)), args.runs))
    failed = False
    try:
        for mib in (bench.parse_size(s) for s in args.sizes.split(",")):
            tmpfs = gib_s(mib, statistics.median(b.tmpfs_ms(mib, args.runs)))
            print("%-8s tmpfs write (dd to /dev/shm) %6.2f GiB/s" % (bench.size_name(mib), tmpfs))
            for n in jobs:
                b.jobs = n
                try:
                    rounds = [b.one_round(mib) for _ in range(1 + args.runs)][1:]
                except Exception as e:  # report and go on
                    print("  --jobs %-3d FAILED: %s" % (n, e))
                    failed = True
                    continue
                d = gib_s(mib, statistics.median(r["dump_ms"] for r in rounds))
                r = gib_s(mib, statistics.median(r["restore_ms"] for r in rounds))
                print("  --jobs %-3d dump %6.2f GiB/s (%3.0f%% of tmpfs)  "
                      "restore %6.2f GiB/s (%3.0f%% of tmpfs)"
                      % (n, d, 100 * d / tmpfs, r, 100 * r / tmpfs))
    finally:
        shutil.rmtree(b.scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
