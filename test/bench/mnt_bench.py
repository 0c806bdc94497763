#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark the mount namespace of a container: RUNS round trips of a ctr
container (runc's default mounts, its own pid, mount, ipc and uts
namespaces, the host's network and cgroup ones: `ctr --share net,cgroup`,
so that only the mount piece is measured), images on /dev/shm. Reports
medians (ms) of:
  - criu dump and criu restore, the wall clock of the whole command;
  - the mount namespace's part of the dump: reading and sorting the
    mounts (check) + writing mnt.img and the tmpfs files (from dump.log);
  - the mount tree's part of the restore: built and entered (restore.log);
  - the same less the mount of the unified cgroup2: that one mount often
    waits several ms in the kernel (ctr's own start pays the same, strace
    -T shows it), which would hide the rest;
and, as the reference measured in the same run, ctr's own mount setup
(bench-ns "mounts, /dev nodes, pivot_root, masks": runc's default mounts
made by ctr's library, with the cgroup mounts and without them).

    test/bench/mnt_bench.py [--build-dir build] [--runs 20] [--gap SECONDS]

--gap: a pause between the teardown and the restore. A restore at once
finds the superblocks the teardown dropped (cgroup2, proc) still dying: a
new mount of the same kind waits for them (an RCU grace period, several
ms); on another host, or a moment later, it does not.

Run as root, from the repository. Asserts nothing but that criu succeeded.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zdtm"))
from buildpaths import ROOT as REPO  # noqa: E402
from reap import become_subreaper, reap_leftovers as reap  # noqa: E402


def us_in(log: Path, pattern: str) -> float:
    m = re.search(pattern, log.read_text())
    if not m:
        sys.exit(f"mnt_bench: no '{pattern}' in {log}")
    return int(m.group(1)) / 1000.0


def cgroup2_ms(log: Path) -> float:
    """How long the cgroup2 mount took: from the log line before it."""
    prev = None
    for line in log.read_text().splitlines():
        m = re.match(r"\((\d+\.\d+)\) (.*)", line)
        if not m:
            continue
        t = float(m.group(1))
        if re.match(r"Mount \d+: cgroup2 at", m.group(2)) and prev is not None:
            return (t - prev) * 1000
        prev = t
    return 0.0


def one(build: Path, root: Path, work: Path, i: int, gap: float) -> dict[str, float]:
    ctr = build / "contrib" / "container" / "ctr"
    criu = build / "criu" / "criu"
    name = f"mntbench{os.getpid()}-{i}"
    state = work / f"{name}.state"
    img = Path(tempfile.mkdtemp(prefix="mnt_bench.", dir="/dev/shm"))
    try:
        pid = int(subprocess.run([str(ctr), "run", "-d", "--name", name, "--state", str(state),
                                  "--share", "net,cgroup", str(root), "--",
                                  "/usr/bin/ctr-service", "--socket", "none"],
                                 check=True, capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL).stdout)
        time.sleep(0.2)
        t = time.monotonic()
        subprocess.run([str(criu), "dump", "-t", str(pid), "-D", str(img), "-o", "dump.log",
                        "-v3"], check=True)
        dump = (time.monotonic() - t) * 1000
        subprocess.run([str(ctr), "delete", "--state", str(state), "--keep-state", name],
                       check=True, capture_output=True)
        reap()
        time.sleep(gap)
        t = time.monotonic()
        subprocess.run([str(criu), "restore", "-D", str(img), "-d", "--root", str(root),
                        "--pidfile", "pid", "-o", "restore.log", "-v4"], check=True)
        restore = (time.monotonic() - t) * 1000
        rpid = (img / "pid").read_text()
        subprocess.run([str(ctr), "delete", "--state", str(state), "--pid", rpid, name],
                       check=True, capture_output=True)
        reap()
        dlog, rlog = img / "dump.log", img / "restore.log"
        tree = us_in(rlog, r"built and entered in (\d+) us")
        return {
            "criu dump (whole)": dump,
            "criu restore (whole)": restore,
            "dump: mounts read and sorted": us_in(dlog, r"of its own, \d+ mounts, .* in (\d+) us"),
            "dump: mnt.img + tmpfs files": us_in(dlog, r"files of \d+ tmpfs, in (\d+) us"),
            "restore: mount tree built, entered": tree,
            "  the same less the cgroup2 mount": tree - cgroup2_ms(rlog),
        }
    finally:
        shutil.rmtree(img, ignore_errors=True)


def reference(build: Path, root: Path, runs: int) -> tuple[float, float]:
    """Medians of ctr's own mount setup (bench-ns), in ms: with the cgroup
    mounts, and without them."""
    p = subprocess.run([str(build / "contrib" / "container" / "bench-ns"), str(root), str(runs)],
                       check=True, capture_output=True, text=True)
    rows = [float(line.split()[-2]) / 1000.0 for line in p.stdout.splitlines()
            if line.startswith(("mounts, /dev nodes, pivot_root, masks",
                                "  the same without /sys/fs/cgroup"))]
    if len(rows) != 2:
        sys.exit("mnt_bench: bench-ns printed no mount rows")
    return rows[0], rows[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--gap", type=float, default=0.0)
    a = ap.parse_args()
    build = Path(a.build_dir).resolve()
    try:
        become_subreaper()
    except OSError as err:
        sys.exit(f"mnt_bench: can't become a child subreaper: {err}")
    p = subprocess.run([str(REPO / "contrib" / "container" / "mkrootfs.sh"), "-b", str(build)],
                       check=True, capture_output=True, text=True)
    src = Path(p.stdout.strip().splitlines()[-1])
    work = Path(tempfile.mkdtemp(prefix="mnt_bench."))
    try:
        root = work / "root"
        subprocess.run(["cp", "-a", str(src), str(root)], check=True)
        rows: dict[str, list[float]] = {}
        for i in range(a.runs):
            for k, v in one(build, root, work, i, a.gap).items():
                rows.setdefault(k, []).append(v)
        ref = reference(build, root, a.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'what (ms, ' + str(a.runs) + f' runs, gap {a.gap} s)':44} {'median':>8} {'min':>8}")
    for k, vals in rows.items():
        print(f"{k:44} {statistics.median(vals):8.2f} {min(vals):8.2f}")
    print(f"{'ctr: runc default mounts + pivot_root (ref)':44} {ref[0]:8.2f}")
    print(f"{'  the same without /sys/fs/cgroup (ref)':44} {ref[1]:8.2f}")


if __name__ == "__main__":
    main()
