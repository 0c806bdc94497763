#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark criu dump and restore (reports figures, asserts nothing).

For each size (a trivial process, 64 MiB and 1 GiB of touched anonymous
memory) it starts test/bench/bench_mem, times `criu dump` (which kills it)
and `criu restore -d` by the wall clock, checks that the restored process
still has its memory, kills and reaps it.  One warm-up round is discarded,
then RUNS rounds are measured.  In the same run it measures the yardsticks
for the same size: memcpy between two faulted-in buffers (bench_memcpy) and
a write of that many bytes to tmpfs (dd to /dev/shm), and prints criu's
throughput as a fraction of theirs.

The images go to a scratch directory made in --images-dir, by default
/dev/shm (tmpfs, so the dump writes to memory, just like the dd yardstick).  criu runs with -v4;
the elapsed time its own log records (the stamp of its last line) is shown
beside the wall clock, with the slowest steps between two log lines.

Every round is run twice, in turn: as criu runs by default (checksums of
the images and of the page stores written at dump, checked at restore) and
with --skip-checksum on both commands; the figures of both and the cost of
the checksums are shown side by side (--no-compare: the default only).
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, NoReturn

# test/zdtm holds the modules the tests and benchmarks share
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zdtm"))
import buildpaths  # noqa: E402
from reap import become_subreaper, kill_and_reap, proc_state  # noqa: E402

MIB = 1 << 20


def die(msg: str) -> NoReturn:
    print("bench: error: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_size(text):
    """'0' or 'trivial', '64M', '1G' -> MiB."""
    text = text.strip().lower()
    if text in ("0", "trivial"):
        return 0
    m = re.fullmatch(r"(\d+)\s*([mg]i?b?)?", text)
    if not m:
        die("bad size '%s' (use e.g. trivial, 64M, 1G)" % text)
    n = int(m.group(1))
    return n * 1024 if (m.group(2) or "m").startswith("g") else n


def size_name(mib):
    if mib == 0:
        return "trivial"
    if mib % 1024 == 0:
        return "%d GiB" % (mib // 1024)
    return "%d MiB" % mib


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.002)


def dir_bytes(path):
    total = 0
    for name in os.listdir(path):
        p = os.path.join(path, name)
        if os.path.isfile(p):
            total += os.path.getsize(p)
    return total


LOG_STAMP = re.compile(r"^\((\d+)\.(\d+)\)\s*")
LOG_DURATION = re.compile(r"\b(?:took|elapsed|spent)\s+(\d+(?:\.\d+)?)\s*(us|ms|s)\b")
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def log_label(text):
    """A log line without its numbers, to group the same step across runs."""
    return re.sub(r"0x[0-9a-f]+|\d+(?:\.\d+)?", "#", text.strip())[:90]


def read_log(path):
    """Reads a criu log written with -v4.  Returns (elapsed ms by the stamp of
    its last line, {label: ms}).  The ms of a label is the time from the line
    before to that line (the step it closes), added up over its lines; lines
    that state a duration themselves ("took N ms") give that instead."""
    last = None
    steps: dict[str, float] = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = LOG_STAMP.match(line)
                if not m:
                    continue
                stamp = int(m.group(1)) * 1e3 + int(m.group(2)) / 1e3
                text = line[m.end():]
                d = LOG_DURATION.search(text)
                if d:
                    ms = float(d.group(1)) * UNIT[d.group(2)]
                else:
                    ms = stamp - (last or 0.0)
                label = log_label(text)
                steps[label] = steps.get(label, 0.0) + ms
                last = stamp
    except FileNotFoundError:
        pass
    return last, steps


CHECKED = re.compile(r"Page stores checked: .* in (\d+) ms \(waited (\d+) ms\)")


def checks_waited(path):
    """How long the restore waited for its check of the page stores (its
    log's "Page stores checked" line), 0 without one."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = CHECKED.search(line)
                if m:
                    return float(m.group(2))
    except FileNotFoundError:
        pass
    return 0.0


def show_log_tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()[-n:]
        print("---- last lines of %s ----" % path, file=sys.stderr)
        sys.stderr.write("".join(lines))
    except FileNotFoundError:
        pass


class Bench:
    def __init__(self, args):
        self.args = args
        self.criu = args.criu
        self.mem = os.path.join(args.build_dir, "test/bench/bench_mem")
        self.memcpy = os.path.join(args.build_dir, "test/bench/bench_memcpy")
        needed = [self.memcpy]
        if not args.yardsticks_only:
            needed += [self.criu, self.mem]
        for f in needed:
            if not os.access(f, os.X_OK):
                die("%s is missing: build first (scripts/build.sh)" % f)
        # Our own directory inside --images-dir: the only one we remove.
        self.scratch = tempfile.mkdtemp(prefix="criu-bench.", dir=args.images_dir)
        self.imgdir = os.path.join(self.scratch, "img")
        self.ready = os.path.join(self.scratch, "ready")
        self.devnull = open(os.devnull, "r+b")
        # --jobs N for both commands (jobs_bench.py sets it per round)
        self.jobs = getattr(args, "jobs", None)

    def criu_run(self, argv, log):
        """Runs criu; returns (wall ms, CPU ms of criu itself, all threads)."""
        t0 = time.perf_counter()
        with tempfile.TemporaryFile() as out:
            p = subprocess.Popen([self.criu] + argv, stdin=self.devnull,
                                 stdout=out, stderr=subprocess.STDOUT)
            _, status, ru = os.wait4(p.pid, 0)
            ms = (time.perf_counter() - t0) * 1e3
            rc = os.waitstatus_to_exitcode(status)
            if rc != 0:
                out.seek(0)
                sys.stderr.write(out.read().decode(errors="replace"))
                show_log_tail(os.path.join(self.imgdir, log))
                raise RuntimeError("criu %s failed with status %d" % (argv[0], rc))
        return ms, (ru.ru_utime + ru.ru_stime) * 1e3

    def one_round(self, mib, skip=False):
        """Dump and restore one bench_mem of MIB MiB (SKIP: both with
        --skip-checksum); returns a dict of figures."""
        extra = ["--skip-checksum"] if skip else []
        if self.jobs:
            extra += ["--jobs", str(self.jobs)]
        shutil.rmtree(self.imgdir, ignore_errors=True)
        os.makedirs(self.imgdir)
        for path in (self.ready, self.ready + ".verify"):
            if os.path.exists(path):
                os.unlink(path)

        target = subprocess.Popen([self.mem, str(mib), self.ready],
                                  stdin=self.devnull, stdout=self.devnull,
                                  stderr=self.devnull, start_new_session=True)
        pid = target.pid
        try:
            wait_for(lambda: os.path.exists(self.ready) or target.poll() is not None,
                     120, "bench_mem to become ready")
            if target.poll() is not None:
                raise RuntimeError("bench_mem exited with %d" % target.returncode)

            dump_ms, dump_cpu = self.criu_run(["dump", "-t", str(pid), "-D", self.imgdir,
                                               "-o", "dump.log", "-v4"] + extra, "dump.log")
            try:
                target.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise RuntimeError("pid %d still runs after the dump" % pid)
            image_bytes = dir_bytes(self.imgdir)

            restore_ms, restore_cpu = self.criu_run(["restore", "-D", self.imgdir, "-d",
                                                     "-o", "restore.log", "-v4"] + extra,
                                                    "restore.log")
        except BaseException:
            if target.poll() is None:
                target.kill()
                target.wait()
            raise

        try:
            if proc_state(pid) in (None, "Z", "X"):
                raise RuntimeError("no process %d after the restore" % pid)
            # Not timed: ask the restored copy to check its memory.
            verify = self.ready + ".verify"
            os.kill(pid, signal.SIGUSR1)
            wait_for(lambda: os.path.exists(verify) and os.path.getsize(verify) > 0,
                     60, "the restored bench_mem to check its memory")
            with open(verify) as f:
                verdict = f.read().strip()
            if verdict != "ok":
                raise RuntimeError("restored memory differs: " + verdict)
        finally:
            if not kill_and_reap(pid):
                print("bench: warning: pid %d was not reaped" % pid, file=sys.stderr)

        dump_log = read_log(os.path.join(self.imgdir, "dump.log"))
        restore_log = read_log(os.path.join(self.imgdir, "restore.log"))
        return {
            "dump_ms": dump_ms, "restore_ms": restore_ms,
            "dump_cpu": dump_cpu, "restore_cpu": restore_cpu,
            "waited_ms": checks_waited(os.path.join(self.imgdir, "restore.log")),
            "image_bytes": image_bytes,
            "dump_log_ms": dump_log[0], "restore_log_ms": restore_log[0],
            "dump_durations": dump_log[1], "restore_durations": restore_log[1],
        }

    def memcpy_ms(self, mib, runs):
        out = subprocess.run([self.memcpy, str(mib), str(runs)], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        return [int(l.split()[1]) / 1e6 for l in out.splitlines()
                if l.startswith("memcpy_ns")]

    def tmpfs_ms(self, mib, runs):
        """dd of MIB MiB to a new file on /dev/shm, once warm, then RUNS
        times; each file is removed before the next (not timed)."""
        path = "/dev/shm/criu-bench-dd.%d" % os.getpid()
        times = []
        try:
            for i in range(runs + 1):
                t0 = time.perf_counter()
                subprocess.run(["dd", "if=/dev/zero", "of=" + path, "bs=1M",
                                "count=%d" % mib, "status=none"], check=True)
                ms = (time.perf_counter() - t0) * 1e3
                os.unlink(path)
                if i:
                    times.append(ms)
        finally:
            if os.path.exists(path):
                os.unlink(path)
        return times


def fmt_ms(values):
    if not values:
        return "-"
    med = statistics.median(values)
    return "%.1f (%.1f-%.1f)" % (med, min(values), max(values))


def cost(with_, without):
    """What the checksums add, by the medians: "+12.3 ms (+4.5%)"."""
    a, b = statistics.median(with_), statistics.median(without)
    return "%+.1f ms (%+.1f%%)" % (a - b, 100 * (a - b) / b if b else 0.0)


def gbps(mib, ms):
    return mib * MIB / 1e9 / (ms / 1e3) if ms else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--criu", default=None,
                    help="criu binary (default: BUILD_DIR/criu/criu)")
    ap.add_argument("--build-dir", default=str(buildpaths.build_dir()))
    ap.add_argument("--sizes", default="trivial,64M,1G",
                    help="comma-separated sizes (default: trivial,64M,1G)")
    ap.add_argument("--runs", type=int, default=5, help="measured rounds per size")
    ap.add_argument("--warmup", type=int, default=1, help="discarded rounds per size")
    ap.add_argument("--images-dir", default="/dev/shm",
                    help="where to make the scratch directory for the images "
                         "(default: /dev/shm, a tmpfs)")
    ap.add_argument("--yardsticks-only", action="store_true",
                    help="measure only memcpy and the tmpfs write (no criu)")
    ap.add_argument("--no-compare", action="store_true",
                    help="do not measure with --skip-checksum beside the default")
    ap.add_argument("--jobs", type=int, default=None,
                    help="criu dump and restore --jobs N (default: criu's default)")
    args = ap.parse_args()
    if args.criu is None:
        args.criu = os.path.join(args.build_dir, "criu/criu")
    if os.geteuid() != 0:
        die("criu needs root")

    # Killed (e.g. by a CI timeout): unwind, so that the finally clauses kill
    # and reap the targets instead of leaving 1 GiB processes behind.
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    # Restored tasks are orphans once criu exits: let them be our children,
    # so that we reap them (PID 1 here may not).
    try:
        become_subreaper()
    except OSError as e:
        die(str(e))
    if not os.path.isdir(args.images_dir):
        die("%s is not a directory" % args.images_dir)
    b = Bench(args)
    try:
        return run(args, b)
    finally:
        shutil.rmtree(b.scratch, ignore_errors=True)


def run(args, b):
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]

    if args.yardsticks_only:
        print("yardsticks, %d runs; median ms (min-max)" % args.runs)
        for mib in sizes:
            if not mib:
                continue
            for what, ms in (("memcpy", b.memcpy_ms(mib, args.runs)),
                             ("tmpfs dd", b.tmpfs_ms(mib, args.runs))):
                print("  %-8s %-8s %-28s %6.2f GB/s" % (size_name(mib), what,
                      fmt_ms(ms) + " ms", gbps(mib, statistics.median(ms))))
        return 0

    version = subprocess.run([b.criu, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout.strip()
    print("criu benchmark: %s; %d warm-up + %d measured rounds per size"
          % ((version.splitlines() or ["?"])[0], args.warmup, args.runs))
    fs = subprocess.run(["stat", "-f", "-c", "%T", args.images_dir],
                        stdout=subprocess.PIPE, text=True).stdout.strip()
    print("images in %s (%s); times are medians in ms (min-max); GB/s = 10^9 bytes/s"
          % (b.scratch, fs))
    print()

    rows = []
    failed = False
    for mib in sizes:
        name = size_name(mib)
        res: list[dict[str, Any]] = []
        skipped: list[dict[str, Any]] = []
        try:
            for i in range(args.warmup + args.runs):
                # in turn, each mode first every other round
                modes = [False] if args.no_compare else [False, True][::1 - 2 * (i % 2)]
                for skip in modes:
                    r = b.one_round(mib, skip)
                    if i >= args.warmup:
                        (skipped if skip else res).append(r)
        except Exception as e:      # report and go on with the next size
            print("%-8s FAILED: %s" % (name, e))
            failed = True
            continue
        finally:
            shutil.rmtree(b.imgdir, ignore_errors=True)

        dump = [r["dump_ms"] for r in res]
        rest = [r["restore_ms"] for r in res]
        row = {"name": name, "mib": mib, "dump": dump, "restore": rest,
               "image_mib": statistics.median(r["image_bytes"] for r in res) / MIB,
               "dump_log": [r["dump_log_ms"] for r in res if r["dump_log_ms"] is not None],
               "restore_log": [r["restore_log_ms"] for r in res
                               if r["restore_log_ms"] is not None],
               "skip_dump": [r["dump_ms"] for r in skipped],
               "skip_restore": [r["restore_ms"] for r in skipped],
               "cpu_dump": [r["dump_cpu"] for r in res],
               "cpu_restore": [r["restore_cpu"] for r in res],
               "skip_cpu_dump": [r["dump_cpu"] for r in skipped],
               "skip_cpu_restore": [r["restore_cpu"] for r in skipped],
               "waited": [r["waited_ms"] for r in res],
               "durations": {}}
        for kind in ("dump", "restore"):
            for r in res:
                for label, ms in r[kind + "_durations"].items():
                    row["durations"].setdefault((kind, label), []).append(ms)
        if mib:
            row["memcpy"] = b.memcpy_ms(mib, args.runs)
            row["tmpfs"] = b.tmpfs_ms(mib, args.runs)
        rows.append(row)

        print("%s (images: %.1f MiB)" % (name, row["image_mib"]))
        print("  dump     wall %-24s criu's log %s"
              % (fmt_ms(dump) + " ms", fmt_ms(row["dump_log"]) + " ms"))
        print("  restore  wall %-24s criu's log %s"
              % (fmt_ms(rest) + " ms", fmt_ms(row["restore_log"]) + " ms"))
        if skipped:
            for kind in ("dump", "restore"):
                print("  %-8s checksums %-24s --skip-checksum %-24s cost %s"
                      % (kind, fmt_ms(row[kind]) + " ms", fmt_ms(row["skip_" + kind]) + " ms",
                         cost(row[kind], row["skip_" + kind])))
                print("  %-8s criu's CPU %-23s --skip-checksum %-24s cost %s"
                      % ("", fmt_ms(row["cpu_" + kind]) + " ms",
                         fmt_ms(row["skip_cpu_" + kind]) + " ms",
                         cost(row["cpu_" + kind], row["skip_cpu_" + kind])))
            print("  restore  waited for the check of the page stores: %s ms"
                  % fmt_ms(row["waited"]))
        # The slowest steps by criu's own log stamps (at least 5% of the
        # log's elapsed time, 3 at most per command).
        for kind, total in (("dump", row["dump_log"]), ("restore", row["restore_log"])):
            if not total:
                continue
            total = statistics.median(total)
            steps = [(statistics.median(v), label) for (k, label), v
                     in row["durations"].items() if k == kind]
            steps = [x for x in sorted(steps, reverse=True) if x[0] >= 0.05 * total][:3]
            for ms, label in steps:
                print("    %-7s step up to log line \"%s\": %.1f ms" % (kind, label, ms))
        if mib:
            d = gbps(mib, statistics.median(dump))
            r = gbps(mib, statistics.median(rest))
            m = gbps(mib, statistics.median(row["memcpy"]))
            t = gbps(mib, statistics.median(row["tmpfs"]))
            print("  memcpy   %-28s %6.2f GB/s" % (fmt_ms(row["memcpy"]) + " ms", m))
            print("  tmpfs dd %-28s %6.2f GB/s" % (fmt_ms(row["tmpfs"]) + " ms", t))
            print("  dump     %6.2f GB/s = %5.1f%% of memcpy, %5.1f%% of tmpfs write"
                  % (d, 100 * d / m, 100 * d / t))
            print("  restore  %6.2f GB/s = %5.1f%% of memcpy, %5.1f%% of tmpfs write"
                  % (r, 100 * r / m, 100 * r / t))
        print()

    # One line per size, for CI logs.
    print("summary (median ms; GB/s; ratio to memcpy / tmpfs write):")
    for row in rows:
        cols = []
        for kind in ("dump", "restore"):
            ms = statistics.median(row[kind])
            text = "%s %8.1f ms" % (kind, ms)
            if row["mib"]:
                v = gbps(row["mib"], ms)
                text += " %6.2f GB/s (%.2f / %.2f)" % (
                    v, v / gbps(row["mib"], statistics.median(row["memcpy"])),
                    v / gbps(row["mib"], statistics.median(row["tmpfs"])))
            cols.append(text)
        print("  %-8s %-46s %s" % (row["name"], cols[0], cols[1]))
    if any(row["skip_dump"] for row in rows):
        print("checksums (median wall ms with / with --skip-checksum, cost; the restore's "
              "wait for its check):")
        for row in rows:
            if row["skip_dump"]:
                print("  %-8s dump %8.1f / %8.1f %-22s restore %8.1f / %8.1f %-22s "
                      "waited %.1f"
                      % (row["name"], statistics.median(row["dump"]),
                         statistics.median(row["skip_dump"]),
                         cost(row["dump"], row["skip_dump"]),
                         statistics.median(row["restore"]),
                         statistics.median(row["skip_restore"]),
                         cost(row["restore"], row["skip_restore"]),
                         statistics.median(row["waited"])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
