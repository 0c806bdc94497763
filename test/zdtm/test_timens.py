"""Time namespaces through many checkpoints (Documentation/namespaces.md).

timens_nested (a task that made a namespace for its children, a child
that made another one below it with large offsets) is dumped and restored
again and again. Inside, every task checks its own clocks when it ends
(continuity, ranges, /proc/uptime, COARSE, RAW, ALARM, what its children
see). From outside, after every restore:

- each namespace moved back by the downtime and nothing more: its offsets
  fell by at least the gap and at most the time from the start of the dump
  to the end of the restore, the same for MONOTONIC and BOOTTIME, so the
  clocks inside never drift beyond the time dump and restore take;
- the nested namespace stays exactly 5 and 500 days behind its parent's,
  to the nanosecond, however many times it is restored.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import zdtm

pytestmark = pytest.mark.usefixtures("need_criu")

DAY_NS = 86400 * 10**9
GAP = 3.0       # > 1.5 s: the program's own continuity checks apply
CYCLES = 4


def offsets(pid: int) -> tuple[int, int]:
    """(monotonic, boottime) offsets in ns of the namespace for pid's children."""
    vals = {}
    for line in Path(f"/proc/{pid}/timens_offsets").read_text().splitlines():
        name, sec, nsec = line.split()
        vals[name] = int(sec) * 10**9 + int(nsec)
    return vals["monotonic"], vals["boottime"]


def children(pid: int) -> list[int]:
    return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def ns_of(pid: int, which: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{which}")


def nested_maker(r: zdtm.Run) -> int:
    """The child in the root's namespace for children that made its own."""
    for c in children(r.pid):
        if ns_of(c, "time") != ns_of(c, "time_for_children"):
            return c
    r.fail("no child of the root has a time namespace for its children")
    raise AssertionError


@pytest.mark.parametrize("pidns", [False, True], ids=["host", "pidns"])
def test_timens_cycles(pidns: bool) -> None:
    with zdtm.Run("timens_nested", "cycles", gap=GAP, pidns=pidns) as r:
        r.start()
        snap = r.snapshot()
        before = offsets(r.pid)
        for i in range(CYCLES):
            img = r.imgdir(f"img{i}")
            t0 = time.monotonic()
            r.dump_ok(img)
            time.sleep(GAP)
            r.restore_ok(img)
            t1 = time.monotonic()
            r.check_running(f"after restore {i + 1}", snap)
            now = offsets(r.pid)
            down_m, down_b = before[0] - now[0], before[1] - now[1]
            if not GAP * 1e9 <= down_m <= (t1 - t0) * 1e9:
                r.fail(f"cycle {i + 1}: the namespace's clocks lost {down_m / 1e9:.3f} s; "
                       f"the gap was {GAP} s, dump to restore took {t1 - t0:.3f} s")
            if abs(down_b - down_m) > 10**6:
                r.fail(f"cycle {i + 1}: BOOTTIME lost {down_b / 1e9:.6f} s, "
                       f"MONOTONIC {down_m / 1e9:.6f} s")
            c = nested_maker(r)
            m, b = offsets(c)
            if (m - now[0], b - now[1]) != (-5 * DAY_NS, -500 * DAY_NS):
                r.fail(f"cycle {i + 1}: the nested namespace is {m - now[0]} ns, "
                       f"{b - now[1]} ns from its parent's, not -5 and -500 days")
            r.note(f"cycle {i + 1}: lost {down_m / 1e9:.3f} s in {t1 - t0:.3f} s")
            before = now
        r.finish()
