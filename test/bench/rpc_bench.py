#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What CRIU's RPC costs (reports figures, asserts nothing).

  - VERSION the way runc asks it: start `criu swrk FD`, one request, criu
    exits; and one request on a connection kept open (the round trip
    alone);
  - dump and restore of a trivial process (`sleep`, a session leader) over
    RPC (swrk, images directory as an fd, restore with rst_sibling) against
    the same with the command line (`criu dump`, `criu restore -d`), by the
    wall clock, in the same run, alternating.

Medians of --runs rounds after one warm-up; images in /dev/shm.

    test/bench/rpc_bench.py [--criu build/criu/criu] [--runs 30]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# test/zdtm holds the modules the tests and benchmarks share
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "zdtm"))

import buildpaths  # noqa: E402
import rpcclient as rpc  # noqa: E402
from reap import become_subreaper, kill_and_reap  # noqa: E402


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:7.2f} ms (min {min(xs) * 1000:.2f})"


def version_spawn(criu: str) -> float:
    req = rpc.msg("criu_req")()
    req.type = rpc.req_type("VERSION")
    t = time.perf_counter()
    s = rpc.Swrk(criu)
    resp = s.call(req)
    s.wait()
    dt = time.perf_counter() - t
    assert resp.success
    return dt


def version_kept(criu: str, n: int) -> list[float]:
    req = rpc.msg("criu_req")()
    req.type = rpc.req_type("VERSION")
    req.keep_open = True
    s = rpc.Swrk(criu)
    s.call(req)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        assert s.call(req).success
        out.append(time.perf_counter() - t)
    s.close()
    return out


def start_sleep() -> subprocess.Popen:
    p = subprocess.Popen(["sleep", "1000"], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.05)
    return p


def rpc_round(criu: str, img: Path) -> tuple[float, float]:
    p = start_sleep()
    fd = os.open(img, os.O_RDONLY | os.O_DIRECTORY)
    try:
        t = time.perf_counter()
        s = rpc.Swrk(criu)
        resp = s.call(rpc.request("DUMP", images_dir_fd=fd, pid=p.pid, log_level=2))
        s.wait()
        dump = time.perf_counter() - t
        assert resp.success, resp.cr_errmsg
        p.wait()
        t = time.perf_counter()
        s = rpc.Swrk(criu)
        resp = s.call(rpc.request("RESTORE", images_dir_fd=fd, rst_sibling=True, log_level=2))
        s.wait()
        restore = time.perf_counter() - t
        assert resp.success, resp.cr_errmsg
        kill_and_reap(resp.restore.pid)
    finally:
        os.close(fd)
    return dump, restore


def cli_round(criu: str, img: Path) -> tuple[float, float]:
    p = start_sleep()
    t = time.perf_counter()
    subprocess.run([criu, "dump", "-t", str(p.pid), "-D", str(img)], check=True)
    dump = time.perf_counter() - t
    p.wait()
    pidfile = img / "pid"
    t = time.perf_counter()
    subprocess.run([criu, "restore", "-d", "-D", str(img), "--pidfile", str(pidfile)],
                   check=True)
    restore = time.perf_counter() - t
    kill_and_reap(int(pidfile.read_text()))
    return dump, restore


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--criu", default=str(buildpaths.criu()))
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    become_subreaper()          # the restored tasks come to us to be reaped

    version_spawn(args.criu)
    spawn = [version_spawn(args.criu) for _ in range(args.runs)]
    kept = version_kept(args.criu, args.runs * 10)
    print(f"VERSION, a criu swrk of its own (as runc): {ms(spawn)}")
    print(f"VERSION on a kept connection (keep_open):  {ms(kept)}")

    base = Path(tempfile.mkdtemp(prefix="rpc-bench.", dir="/dev/shm"))
    try:
        r_d: list[float] = []
        r_r: list[float] = []
        c_d: list[float] = []
        c_r: list[float] = []
        for i in range(args.runs + 1):
            for kind in ("rpc", "cli"):
                img = base / f"{kind}{i}"
                img.mkdir()
                d, r = (rpc_round if kind == "rpc" else cli_round)(args.criu, img)
                if i:
                    (r_d if kind == "rpc" else c_d).append(d)
                    (r_r if kind == "rpc" else c_r).append(r)
                shutil.rmtree(img)
        print(f"dump of sleep,    RPC (swrk): {ms(r_d)}   CLI: {ms(c_d)}")
        print(f"restore of sleep, RPC (swrk): {ms(r_r)}   CLI: {ms(c_r)}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
