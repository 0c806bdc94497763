#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Many containers at once (issue 17): N ctr containers (runc's default
namespaces: pid, mount, network, ipc, uts, cgroup; each its own counter),
images on /dev/shm, one criu per container and nothing of ours shared
between them. Reports, in ms:
  - the start of the N containers by ctr, all at once: the floor a host
    pays to make N sets of namespaces (the limit in the same run);
  - the dump of all N at once, and the restore of all N at once (after
    their teardown, as after a reboot): the whole, and per container;
  - one container alone, dumped and restored, for comparison.

    test/bench/many_bench.py [--build-dir build] [-n 50]

Run as root, from the repository. Asserts nothing but that every criu
succeeded and every container was gone at the end.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zdtm"))
from buildpaths import ROOT as REPO  # noqa: E402
from reap import become_subreaper, reap_leftovers as reap  # noqa: E402


class Fleet:
    def __init__(self, build: Path, root: Path, work: Path, n: int) -> None:
        self.ctr = str(build / "contrib" / "container" / "ctr")
        self.criu = str(build / "criu" / "criu")
        self.root, self.work = root, work
        self.names = [f"many{os.getpid()}-{i}" for i in range(n)]
        self.pids: dict[str, int] = {}

    def state(self, name: str) -> str:
        return str(self.work / f"{name}.state")

    def img(self, name: str) -> Path:
        return Path("/dev/shm") / f"{self.work.name}-{name}"

    def at_once(self, cmds: dict[str, list[str]]) -> tuple[float, dict[str, float]]:
        """Every command started at once: the whole wall time and each one's, in ms."""
        t0 = time.monotonic()
        procs = {k: subprocess.Popen(c, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                 for k, c in cmds.items()}
        each: dict[str, float] = {}
        for k, p in procs.items():
            out, err = p.communicate(timeout=600)
            each[k] = (time.monotonic() - t0) * 1000
            if p.returncode:
                raise RuntimeError(f"{' '.join(cmds[k])}: exit {p.returncode}: {err.strip()}")
            if cmds[k][1] == "run":
                self.pids[k] = int(out)
        return (time.monotonic() - t0) * 1000, each

    def start(self) -> float:
        return self.at_once({n: [self.ctr, "run", "-d", "--name", n, "--state", self.state(n),
                                 str(self.root), "--", "/usr/bin/ctr-service", "--socket",
                                 "none"] for n in self.names})[0]

    def dump(self, names: list[str]) -> tuple[float, dict[str, float]]:
        for n in names:
            self.img(n).mkdir()
        return self.at_once({n: [self.criu, "dump", "-t", str(self.pids[n]), "-D",
                                 str(self.img(n)), "-o", "dump.log"] for n in names})

    def teardown(self, names: list[str], keep: bool) -> None:
        for n in names:
            args = [self.ctr, "delete", "--state", self.state(n)]
            if keep:
                args.append("--keep-state")
            else:
                args += ["--pid", str(self.pids[n])]
            subprocess.run(args + [n], check=True, capture_output=True)
        reap()

    def restore(self, names: list[str]) -> tuple[float, dict[str, float]]:
        res = self.at_once({n: [self.criu, "restore", "-D", str(self.img(n)), "-d", "--root",
                                str(self.root), "--pidfile", "pid", "-o", "restore.log"]
                            for n in names})
        for n in names:
            self.pids[n] = int((self.img(n) / "pid").read_text())
        return res

    def clean(self) -> None:
        for n in self.names:
            if self.pids.get(n):
                subprocess.run([self.ctr, "delete", "--state", self.state(n), "--pid",
                                str(self.pids[n]), n], capture_output=True)
            shutil.rmtree(self.img(n), ignore_errors=True)
        reap()


def row(what: str, total: float, each: list[float], n: int) -> None:
    per = f"{statistics.median(each):9.1f}" if each else " " * 9
    print(f"{what:<44} {n:5d} {total:10.1f} {per} {total / n:9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("-n", type=int, default=50)
    a = ap.parse_args()
    build = Path(a.build_dir).resolve()
    become_subreaper()
    p = subprocess.run([str(REPO / "contrib" / "container" / "mkrootfs.sh"), "-b", str(build)],
                       check=True, capture_output=True, text=True)
    work = Path(tempfile.mkdtemp(prefix="many_bench."))
    root = work / "root"
    subprocess.run(["cp", "-a", p.stdout.strip().splitlines()[-1], str(root)], check=True)
    fleet = Fleet(build, root, work, a.n)
    try:
        print(f"{'what':<44} {'n':>5} {'total ms':>10} {'median':>9} {'per ct':>9}")
        row("ctr run -d, all at once (the floor)", fleet.start(), [], a.n)
        time.sleep(0.5)
        one = fleet.names[:1]
        total, each = fleet.dump(one)
        row("criu dump, one container alone", total, list(each.values()), 1)
        fleet.teardown(one, keep=True)
        total, each = fleet.restore(one)
        row("criu restore, one container alone", total, list(each.values()), 1)
        shutil.rmtree(fleet.img(one[0]))
        total, each = fleet.dump(fleet.names)
        row("criu dump, all at once", total, list(each.values()), a.n)
        fleet.teardown(fleet.names, keep=True)
        total, each = fleet.restore(fleet.names)
        row("criu restore, all at once", total, list(each.values()), a.n)
        fleet.teardown(fleet.names, keep=False)
        fleet.pids.clear()
    finally:
        fleet.clean()
        shutil.rmtree(work, ignore_errors=True)
    print("many_bench: every container is gone")


if __name__ == "__main__":
    main()
