#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What a network namespace costs a restore (reports figures, asserts nothing).

  - unshare(CLONE_NEWNET) alone, timed in a fresh child each run (the
    floor: the one namespace a restore makes for the tree);
  - `criu restore -d` of a sleeping session leader, by the wall clock, in
    four setups dumped once each: in criu's own namespace (the baseline);
    in a namespace of its own with lo only; with a veth pair inside,
    addresses, routes in two tables, a rule, sysctls and an nftables table;
    with a veth whose peer is outside (criu then runs in a namespace the
    bench makes, where the peer is made again);
  - criu's own account: until the tree runs (the restore log's "Restore
    stats", taken right after the tree is let go: the network lock is
    open then, its table still there) and, for the setups with a
    namespace, its net steps (the log's "ms per step"), medians.

Rounds alternate between the setups; medians of --runs rounds after one
warm-up; images in /dev/shm. Needs root, ip and nft.

    test/bench/net_bench.py [--criu build/criu/criu] [--runs 20]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zdtm"))
from reap import become_subreaper  # noqa: E402

CLONE_NEWNET = 0x40000000
ENV = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin")

CONFIGURED = """
ip link set lo up
ip link add d0 type veth peer name d1
ip link set d0 up; ip link set d1 up
ip addr add 10.77.0.2/24 dev d0; ip addr add fd00:77::2/64 dev d0 nodad
ip route add 10.88.0.0/16 via 10.77.0.1; ip route add 10.99.0.0/16 dev d0 table 100
ip rule add from 10.77.0.0/24 table 100 priority 1000
sysctl -qw net.ipv4.ip_forward=1 net.core.somaxconn=777
nft add table inet t
nft add chain inet t c '{ type filter hook input priority 0; policy accept; }'
nft add rule inet t c udp dport 5353 counter accept
"""

libc = ctypes.CDLL(None, use_errno=True)


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:7.2f} ms (min {min(xs) * 1000:.2f})"


def unshare_cost() -> float:
    """One unshare(CLONE_NEWNET), in a child made for it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter()
        libc.unshare(CLONE_NEWNET)
        t1 = time.perf_counter()
        os.write(w, str(t1 - t0).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 64)
    os.close(r)
    os.waitpid(pid, 0)
    return float(data)


class Setup:
    def __init__(self, name: str, criu: str, base: Path, own_ns: bool, script: str = "",
                 outside: bool = False) -> None:
        self.name, self.criu = name, criu
        self.img = base / name
        self.img.mkdir()
        self.host: subprocess.Popen | None = None
        self.prefix: list[str] = []
        self.opts: list[str] = []
        if outside:
            self.host = subprocess.Popen(["unshare", "-n", "sleep", "1d"])
            time.sleep(0.2)
            self.prefix = ["nsenter", f"--net=/proc/{self.host.pid}/ns/net"]
            self.opts = ["--external", "veth[eth0]:vb0"]
        cmd = self.prefix + (["unshare", "-n"] if own_ns else []) + ["sleep", "1000"]
        p = subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        time.sleep(0.2)
        self.pid = p.pid
        ns = f"--net=/proc/{self.pid}/ns/net"
        if script:
            subprocess.run(["nsenter", ns, "sh", "-c", script], check=True, env=ENV)
        if outside:
            subprocess.run(self.prefix + ["ip", "link", "add", "vb0", "type", "veth", "peer",
                                          "name", "eth0", "netns", str(self.pid)],
                           check=True, env=ENV)
            subprocess.run(["nsenter", ns, "sh", "-c", "ip link set lo up; ip link set eth0 "
                            "up; ip addr add 10.55.0.2/24 dev eth0"], check=True, env=ENV)
        subprocess.run(self.prefix + [criu, "dump", "-t", str(self.pid), "-D", str(self.img),
                                      "-o", "dump.log"], check=True)
        os.waitpid(p.pid, 0)
        self.wait_free()

    def wait_free(self) -> None:
        """The killed tree's pid, and with an outside peer its veth, are free again."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                while os.waitpid(-1, os.WNOHANG)[0] > 0:
                    pass
            except ChildProcessError:
                pass
            busy = os.path.exists(f"/proc/{self.pid}")
            if self.host is not None and not busy:
                busy = subprocess.run(self.prefix + ["ip", "link", "show", "vb0"],
                                      capture_output=True, env=ENV).returncode == 0
            if not busy:
                return
            time.sleep(0.005)
        raise RuntimeError(f"{self.name}: pid {self.pid} or its veth is still busy")

    def restore(self) -> tuple[float, dict[str, float]]:
        t0 = time.perf_counter()
        subprocess.run(self.prefix + [self.criu, "restore", "-D", str(self.img), "-d", "-v3",
                                      "-o", "restore.log"] + self.opts, check=True)
        t = time.perf_counter() - t0
        steps: dict[str, float] = {}
        log = (self.img / "restore.log").read_text()
        runs = re.search(r"Restore stats: .*restore (\d+) us", log)
        if runs:
            steps["until it runs"] = int(runs.group(1)) / 1e6
        m = re.search(r"ms per step: (.*)", log)
        if m:
            for part in m.group(1).split(", "):
                name, _, v = part.rpartition(" ")
                steps[name] = float(v) / 1000
        os.kill(self.pid, signal.SIGKILL)
        self.wait_free()
        return t, steps

    def close(self) -> None:
        if self.host is not None:
            self.host.kill()
            self.host.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--criu", default="build/criu/criu")
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    criu = os.path.abspath(a.criu)
    if not all(shutil.which(t, path=ENV["PATH"]) for t in ("ip", "nft", "nsenter")):
        raise SystemExit("net_bench: needs ip, nft and nsenter")
    become_subreaper()
    base = Path(tempfile.mkdtemp(prefix="net-bench.", dir="/dev/shm"))
    setups: list[Setup] = []
    try:
        setups = [Setup("host-netns", criu, base, False),
                  Setup("own-netns", criu, base, True),
                  Setup("configured", criu, base, True, CONFIGURED),
                  Setup("veth-outside", criu, base, True, outside=True)]
        times: dict[str, list[float]] = {s.name: [] for s in setups}
        steps: dict[str, dict[str, list[float]]] = {s.name: {} for s in setups}
        unshare: list[float] = []
        for i in range(a.runs + 1):
            u = unshare_cost()
            for s in setups:
                t, st = s.restore()
                if i:
                    times[s.name].append(t)
                    for k, v in st.items():
                        steps[s.name].setdefault(k, []).append(v)
            if i:
                unshare.append(u)
        base_t = statistics.median(times["host-netns"])
        print(f"unshare(CLONE_NEWNET) alone:   {ms(unshare)}")
        for s in setups:
            med = statistics.median(times[s.name])
            print(f"criu restore -d, {s.name:13s} {ms(times[s.name])}  "
                  f"(+{(med - base_t) * 1000:.2f} ms over host-netns)")
            if steps[s.name]:
                print("    " + ", ".join(
                    f"{k} {statistics.median(v) * 1000:.2f}" for k, v in steps[s.name].items())
                      + " ms")
        own = statistics.median(times["own-netns"])
        print(f"unshare(CLONE_NEWNET) is {statistics.median(unshare) / own * 100:.1f}% of a "
              f"restore with a namespace of its own ({own * 1000:.2f} ms)")
    finally:
        for s in setups:
            s.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
