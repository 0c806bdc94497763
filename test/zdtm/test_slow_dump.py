"""A dump that takes its time: criu is stopped for HOLD_S seconds while it
holds the task frozen, as a loaded machine (a TCG guest: a second) may
stop it. A test program must not count on a fast freeze: what it checks
after the restore is the restore's work, not the dump's speed. And the
dump must not mix moments: what the tree's clocks read after the restore
must come after every expiry it saw queued.

posix_timer_fire allowed its periodic timers six lost periods (300 ms of
freeze) and failed in the 6.1 guest of the kernel tests when the dump took
a second. With its one-shot timer due within the hold, the time namespace's
clocks, read when the tree was checked, went on after the restore from
before the expiry whose signal came with it: the signal arrived 1.3 s
before its time (criu/parts/timens.c now reads them after every task).
With the clocks read last, the freeze shows as time gone by, as for any
frozen task: timerfd_periodic's 50 ms timerfd, re-armed relative with a
deadline already past, lost the 30 periods of the hold (restore now counts
them); time_clocks, timens_nested, posix_timer_ids and timerfd_flags
allowed the dump a fixed time and now check against what their own clocks
show (time_clocks and timens_nested also read their clocks again when a
freeze came between two readings: BOOTTIME - MONOTONIC seemed to move by
as long as the freeze, seen once in the guest).
"""
from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

import zdtm

HOLD_S = 1.5

# criu dump, stopped for SLOW_HOLD seconds once it has frozen the tree and
# checked it, as it starts to read the tasks (its log says "borrowed"): the
# moment that tells a dump that reads its clocks early from one that reads
# them late. The log is -D DIR -o FILE.
WRAPPER = r'''
import os, signal, subprocess, sys, time

args = sys.argv[1:]
p = subprocess.Popen([os.environ["SLOW_REAL"]] + args)
if args[0] == "dump":
    log = os.path.join(args[args.index("-D") + 1], args[args.index("-o") + 1])
    while p.poll() is None:
        try:
            seen = "borrowed, scratch area" in open(log).read()
        except OSError:
            seen = False
        if seen:
            os.kill(p.pid, signal.SIGSTOP)
            time.sleep(float(os.environ["SLOW_HOLD"]))
            os.kill(p.pid, signal.SIGCONT)
            print("slow-criu: held the frozen task", file=sys.stderr)
            break
        time.sleep(0.001)
sys.exit(p.wait())
'''


@pytest.mark.parametrize("name", ["posix_timer_fire", "timerfd_periodic", "posix_timer_ids",
                                  "timerfd_flags", "time_clocks", "timens_nested"])
def test_program_survives_a_slow_dump(name: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if zdtm.SELFCHECK:
        pytest.skip("ZDTM_SELFCHECK=1: no criu")
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")
    wrapper = tmp_path / "slow-criu"
    wrapper.write_text(f"#!{sys.executable}\n" + WRAPPER)
    wrapper.chmod(stat.S_IRWXU)
    desc = zdtm.load_desc(name)
    with zdtm.Run(name, "slow-dump", args=desc.args) as r:
        r.start()
        monkeypatch.setenv("SLOW_REAL", os.path.abspath(zdtm.CRIU))
        monkeypatch.setattr(zdtm, "CRIU", str(wrapper))
        monkeypatch.setenv("SLOW_HOLD", str(HOLD_S))
        img = r.imgdir("img")
        res = r.dump(img, desc.dump_opts)
        if res.returncode != 0:
            r.fail("criu dump failed", res)
        if "slow-criu: held the frozen task" not in res.stderr:
            r.fail("the task was never seen frozen: nothing was held", res)
        r.gone_after_dump(res)
        time.sleep(r.gap)
        r.restore_ok(img, desc.restore_opts)
        r.finish(desc.expect)
