"""Checkpoint on one machine, restore on another: two guests of the patched
kernel, booted one after the other, share a host directory (9p).

Guest A (4 CPUs) runs the probe (probe.c) in a time namespace (monotonic
+50000 s, boottime +100000 s) and a CPU namespace made of its CPUs 3 and 2,
the main thread pinned to virtual CPU 0 and the other thread to virtual
CPU 1; it waits until its uptime is well past what B's will be, dumps the
probe and leaves the images and the probe's output in the shared
directory. Guest B (2 CPUs: CPUs 3 and 2 do not exist there) restores it
right after booting. Inside the probe nothing may change: its clocks go on
from the dump (no jump by the difference of the two uptimes), it sees the
same virtual CPUs (sched_getcpu, getcpu, affinities, nproc), and its start
times (/proc/self/stat field 22, process and thread) are the same.

Run with: python3 -m pytest -m kernel test/kernel/test_two_hosts.py
"""
from typing import Any

import pytest

from guestlib import parse_probe

pytestmark = pytest.mark.kernel

NSEC = 1_000_000_000
A_UPTIME_S = 12     # A dumps once its uptime passed this: B restores at 2-4 s

GUEST_A = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
pid=$(probe /tmp/out --timens 50000,100000 --cpu-ns 0:3,1:2 --cpus 0 --thread-cpus 1) ||
	fail probe
while [ $(cut -d. -f1 /proc/uptime) -lt @A_UPTIME@ ]; do sleep 0.5; done
echo "PID $pid"
echo "FIRST $(head -1 /tmp/out)"
echo "MAP $(cat /proc/$pid/cpu_map | tr '\n' ,)"
mkdir /tmp/img
criu dump -t $pid -D /tmp/img -o dump.log -v4 || { grep Error /tmp/img/dump.log; fail dump; }
echo "UPTIME $(cat /proc/uptime)"
echo "BEFORE $(tail -1 /tmp/out)"
cp -a /tmp/img /shared/img && cp /tmp/out /shared/out || fail copy
""".replace("@A_UPTIME@", str(A_UPTIME_S))

GUEST_B = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
cp -a /shared/img /tmp/img && cp /shared/out /tmp/out || fail copy
n=$(wc -l < /tmp/out)
echo "UPTIME $(cat /proc/uptime)"
criu restore -d -D /tmp/img -o restore.log -v4 --pidfile /tmp/pid ||
	{ grep Error /tmp/img/restore.log; fail restore; }
pid=$(cat /tmp/pid)
i=0
while [ $(wc -l < /tmp/out) -lt $((n + 3)) ]; do
	sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || fail "no output after the restore"
done
echo "PID $pid"
echo "AFTER $(sed -n "$((n + 1))p" /tmp/out)"
echo "LATER $(tail -1 /tmp/out)"
echo "MAP $(cat /proc/$pid/cpu_map | tr '\n' ,)"
echo "REAL $(cat /proc/$pid/task/*/status | awk '/Cpus_allowed_list/ {print $2}' | tr '\n' ' ')"
echo "NPROC_HERE $(nproc)"
grep -E 'Warn|CPU namespace' /tmp/img/restore.log | sed 's/^/LOG /'
cp /tmp/img/restore.log /shared/
"""


def tagged(out: str) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for line in out.splitlines():
        tag, _, rest = line.partition(" ")
        res.setdefault(tag, rest)
    return res


@pytest.fixture(scope="module")
def two_hosts(guest, criu_bin, probe_bin, tmp_path_factory):
    share = tmp_path_factory.mktemp("two-hosts")
    extra = [str(criu_bin), str(probe_bin)]
    rc, out_a, err = guest.run(GUEST_A, smp=4, selftests=False, timeout=180,
                               share=share, extra=extra)
    assert rc == 0, "guest A:\n" + out_a + err
    rc, out_b, err = guest.run(GUEST_B, smp=2, selftests=False, timeout=180,
                               share=share, extra=extra)
    assert rc == 0, "guest B:\n" + out_b + err
    a, b = tagged(out_a), tagged(out_b)
    for d in (a, b):
        for k in ("FIRST", "BEFORE", "AFTER", "LATER"):
            if k in d:
                d[k] = parse_probe(d[k])
    return a, b, f"--- guest A:\n{out_a}--- guest B:\n{out_b}"


def test_the_hosts_differ(two_hosts):
    a, b, out = two_hosts
    assert float(a["UPTIME"].split()[0]) - float(b["UPTIME"].split()[0]) > 5, out
    assert b["NPROC_HERE"] == "2", out


def test_clocks_continue(two_hosts):
    """No jump by the uptime difference, nor by the namespace's offsets."""
    a, b, out = two_hosts
    for k in ("mono", "boot"):
        d = (int(b["AFTER"][k]) - int(a["BEFORE"][k])) / NSEC
        assert 0 < d < 1.5, f"CLOCK_{k} moved by {d} s across the move:\n{out}"
    assert int(b["AFTER"]["boot"]) > 100000 * NSEC, out


def test_same_virtual_cpus(two_hosts):
    a, b, out = two_hosts
    first = a["FIRST"]
    assert (first["cpu"], first["vcpu"], first["tcpu"]) == ("0", "0", "1"), out
    assert (first["aff"], first["taff"], first["nproc"]) == ("0", "1", "2"), out
    for line in (b["AFTER"], b["LATER"]):
        for k in ("cpu", "vcpu", "tcpu", "aff", "taff", "nproc"):
            assert line[k] == first[k], f"{k}: {first[k]} in A, {line[k]} in B\n{out}"


def test_namespace_on_other_cpus(two_hosts):
    """A's CPUs 3 and 2 do not exist in B: the automatic rule puts the
    namespace on B's 1 and 0, and the affinities held there."""
    a, b, out = two_hosts
    assert a["MAP"] == "0 3,1 2,", out
    assert b["MAP"] == "0 1,1 0,", out
    assert b["REAL"].split() == ["1", "0"], out
    assert "not online here, not in criu's cpuset or not free" in out, out


def test_start_times_kept(two_hosts):
    a, b, out = two_hosts
    for k in ("start", "tstart"):
        assert b["AFTER"][k] == a["FIRST"][k], \
            f"{k}: {a['FIRST'][k]} in A, {b['AFTER'][k]} in B\n{out}"
    # in the time namespace: boottime +100000 s, i.e. 10^7 ticks
    assert int(a["FIRST"]["start"]) > 100000 * 100, out
    assert int(a["FIRST"]["tstart"]) - int(a["FIRST"]["start"]) >= 25, out
