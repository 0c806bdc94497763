"""criu inside the guest (the patched 6.1 kernel of kernel/): criu check, a
plain dump and restore, start times of a process and a thread, and CPU
namespaces (kept, moved with --cpu-map, dropped with --cpu-ns=ignore).

Run with: python3 -m pytest -m kernel test/kernel
"""
import os
import re
import subprocess

import pytest

from guestlib import BUILD_DIR, CRIU, parse_probe

pytestmark = pytest.mark.kernel

NSEC = 1_000_000_000
GAP_S = 3            # between dump and restore: a clock that did not continue jumps by it


def test_criu_check(guest, criu_bin):
    rc, out, err = guest.run("criu check", selftests=False, extra=[str(criu_bin)])
    assert rc == 0, out + err
    assert re.search(r"start time restore \(kernel/ patches\)\s+yes", out), out
    assert re.search(r"CPU namespaces \(kernel/ patches\)\s+yes", out), out
    # 6.1 has neither: criu falls back to reading pagemap, and to the old way of timer ids
    assert re.search(r"PAGEMAP_SCAN.*\s+no", out), out
    assert "Looks good." in out


COUNTER = """
setsid counter /tmp/log 100 </dev/null >/dev/null 2>&1 &
sleep 1
pid=$(pidof counter)
mkdir /tmp/img
criu dump -t $pid -D /tmp/img -o dump.log -v4 || { grep Error /tmp/img/dump.log; exit 1; }
n=$(wc -l < /tmp/log)
sleep %d
criu restore -d -D /tmp/img -o restore.log -v4 || { grep Error /tmp/img/restore.log; exit 2; }
i=0
while [ $(wc -l < /tmp/log) -lt $((n + 3)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
echo "PID $pid $(pidof counter)"
sed -n "${n}p;$((n + 1))p" /tmp/log
""" % GAP_S


def test_plain_dump_restore(guest, criu_bin):
    """contrib/demo/counter: dumped and restored in the guest, it goes on
    with its pid, its open log and its monotonic clock."""
    counter = BUILD_DIR / "contrib" / "demo" / "counter"
    if not counter.exists():
        pytest.fail(f"{counter} is not built (ninja -C {BUILD_DIR})")
    rc, out, err = guest.run(COUNTER, selftests=False, timeout=120,
                             extra=[str(criu_bin), str(counter)])
    assert rc == 0, out + err
    lines = out.strip().splitlines()
    pids = lines[-3].split()
    assert pids[1] == pids[2], out
    before, after = (dict(kv.split("=") for kv in l.split()) for l in lines[-2:])
    assert int(after["count"]) == int(before["count"]) + 1, out
    gap = float(after["mono"]) - float(before["mono"])
    assert 0 < gap < 1.5, f"CLOCK_MONOTONIC moved by {gap} s across the restore:\n{out}"


# The probe (probe.c) in a CPU namespace of the guest's CPUs 3 and 2, its
# main thread pinned to virtual CPU 0, the other to 1; helpers: wait until
# /tmp/out has N lines, the real CPUs (Cpus_allowed_list) of each thread.
PROBE_IN_NS = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
wait_lines() {
	i=0
	while [ $(wc -l < /tmp/out) -lt $1 ]; do
		sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || fail "no output after $2"
	done
}
real_cpus() {
	cat /proc/$1/task/*/status | awk '/Cpus_allowed_list/ {print $2}' | tr '\n' ' '
}
pid=$(probe /tmp/out --cpu-ns 0:3,1:2 --cpus 0 --thread-cpus 1) || fail probe
sleep 1
"""

# Three rounds of dump and restore: as it was, with --cpu-map moving the
# namespace to CPUs 1 and 0, and with --cpu-ns=ignore (no namespace: the
# real CPUs behind it).
CPU_NS = PROBE_IN_NS + r"""
echo "PID $pid INIT_CPUNS $(stat -L -c %i /proc/1/ns/cpu)"
echo "FIRST $(head -1 /tmp/out)"
for stage in 1 2 3; do
	img=/tmp/img$stage
	mkdir $img
	criu dump -t $pid -D $img -o dump.log -v4 || { grep Error $img/dump.log; fail dump $stage; }
	echo "BEFORE$stage $(tail -1 /tmp/out)"
	n=$(wc -l < /tmp/out)
	sleep GAP
	case $stage in
	1) opts= ;;
	2) opts="--cpu-map 3:1,2:0" ;;
	3) opts="--cpu-ns=ignore" ;;
	esac
	criu restore -d -D $img -o restore.log -v4 $opts ||
		{ grep Error $img/restore.log; fail restore $stage; }
	wait_lines $((n + 2)) "restore $stage"
	echo "AFTER$stage $(sed -n "$((n + 1))p" /tmp/out)"
	echo "NS$stage $(stat -L -c %i /proc/$pid/ns/cpu) $(cat /proc/$pid/cpu_map | tr '\n' ,)"
	echo "REAL$stage $(real_cpus $pid)"
	echo "WARN$stage $(grep -c Warn $img/restore.log)"
done
cp -a /tmp/img1 /shared/img1
""".replace("GAP", str(GAP_S))


@pytest.fixture(scope="module")
def cpu_ns_run(guest, criu_bin, probe_bin, tmp_path_factory):
    share = tmp_path_factory.mktemp("share")
    rc, out, err = guest.run(CPU_NS, selftests=False, timeout=240, share=share,
                             extra=[str(criu_bin), str(probe_bin)])
    assert rc == 0, out + err
    res = {"share": share, "out": out}
    for line in out.splitlines():
        tag, _, rest = line.partition(" ")
        res[tag] = rest
    for k in list(res):
        if re.fullmatch(r"(FIRST|BEFORE\d|AFTER\d)", k):
            res[k] = parse_probe(res[k])
    return res


def same_view(before, after, out):
    """What the probe sees is the same; its CPU namespace is a new one."""
    for k in ("cpu", "vcpu", "tcpu", "aff", "taff", "nproc", "start", "tstart"):
        assert before[k] == after[k], f"{k}: {before[k]} before, {after[k]} after\n{out}"


def clocks_continue(before, after, out):
    for k in ("mono", "boot"):
        d = (int(after[k]) - int(before[k])) / NSEC
        assert 0 < d < GAP_S / 2, f"{k} moved by {d} s over a {GAP_S} s gap:\n{out}"


def test_cpu_ns_set_up(cpu_ns_run):
    r, out = cpu_ns_run, cpu_ns_run["out"]
    first = r["FIRST"]
    init_ns = r["PID"].split()[2]
    assert first["cpuns"] != init_ns, out
    assert (first["cpu"], first["vcpu"], first["tcpu"]) == ("0", "0", "1"), out
    assert (first["aff"], first["taff"], first["nproc"]) == ("0", "1", "2"), out


def test_cpu_ns_restored_on_same_cpus(cpu_ns_run):
    r, out = cpu_ns_run, cpu_ns_run["out"]
    same_view(r["FIRST"], r["AFTER1"], out)
    clocks_continue(r["BEFORE1"], r["AFTER1"], out)
    ino, _, cpu_map = r["NS1"].partition(" ")
    assert ino != r["PID"].split()[2] and r["AFTER1"]["cpuns"] == ino, out
    assert cpu_map == "0 3,1 2,", out
    assert r["REAL1"].split() == ["3", "2"], out
    assert r["WARN1"] == "0", out


def test_cpu_ns_moved_by_cpu_map(cpu_ns_run):
    r, out = cpu_ns_run, cpu_ns_run["out"]
    same_view(r["FIRST"], r["AFTER2"], out)
    assert r["AFTER2"]["cpuns"] != r["PID"].split()[2], out
    clocks_continue(r["BEFORE2"], r["AFTER2"], out)
    assert r["NS2"].partition(" ")[2] == "0 1,1 0,", out
    assert r["REAL2"].split() == ["1", "0"], out


def test_cpu_ns_ignored(cpu_ns_run):
    """--cpu-ns=ignore: no namespace; the affinities are the CPUs behind it."""
    r, out = cpu_ns_run, cpu_ns_run["out"]
    a = r["AFTER3"]
    assert a["cpuns"] == r["PID"].split()[2], out
    assert (a["cpu"], a["aff"], a["taff"], a["nproc"]) == ("1", "1", "0", "4"), out
    for k in ("start", "tstart"):
        assert a[k] == r["FIRST"][k], out
    clocks_continue(r["BEFORE3"], a, out)


def test_start_time_of_process_and_thread(cpu_ns_run):
    """/proc/self/stat and /proc/self/task/TID/stat field 22, read inside,
    unchanged by three restores; the thread started 0.3 s after the
    process, so the two values are told apart."""
    r, out = cpu_ns_run, cpu_ns_run["out"]
    first = r["FIRST"]
    assert int(first["tstart"]) - int(first["start"]) >= 25, out
    for s in (1, 2, 3):
        assert r[f"AFTER{s}"]["start"] == first["start"], out
        assert r[f"AFTER{s}"]["tstart"] == first["tstart"], out


# The probe in a CPU namespace of CPUs 3 and 2, dumped, and restored by a
# criu confined to a cpuset of CPUs 0-1: the kernel takes only CPUs of the
# writer's cpuset in a map, so criu backs the namespace with its own CPUs.
CPUSET = PROBE_IN_NS + r"""
echo "FIRST $(head -1 /tmp/out)"
mkdir /tmp/img /tmp/cg
criu dump -t $pid -D /tmp/img -o dump.log -v4 || { grep Error /tmp/img/dump.log; fail dump; }
n=$(wc -l < /tmp/out)
mount -t cgroup2 none /tmp/cg && echo +cpuset > /tmp/cg/cgroup.subtree_control &&
	mkdir /tmp/cg/r && echo 0-1 > /tmp/cg/r/cpuset.cpus &&
	echo $$ > /tmp/cg/r/cgroup.procs || fail "cpuset 0-1"
criu restore -d -D /tmp/img -o restore.log -v4 || { grep Error /tmp/img/restore.log; fail restore; }
wait_lines $((n + 2)) "the restore"
echo "AFTER $(sed -n "$((n + 1))p" /tmp/out)"
echo "NS $(cat /proc/$pid/cpu_map | tr '\n' ,)"
echo "REAL $(real_cpus $pid)"
"""


def test_cpu_ns_restored_within_a_cpuset(guest, criu_bin, probe_bin):
    """criu in a cpuset of CPUs 0-1 restores a tree whose namespace ran on
    CPUs 3 and 2 onto CPUs 1 and 0 (the same rule as for CPUs that are not
    online): the tree sees what it saw, and runs in criu's cpuset."""
    rc, out, err = guest.run(CPUSET, selftests=False, timeout=180,
                             extra=[str(criu_bin), str(probe_bin)])
    assert rc == 0, out + err
    r = {}
    for line in out.splitlines():
        tag, _, rest = line.partition(" ")
        r[tag] = rest
    same_view(parse_probe(r["FIRST"]), parse_probe(r["AFTER"]), out)
    assert r["NS"] == "0 1,1 0,", out
    assert r["REAL"].split() == ["1", "0"], out


def test_cpu_ns_refused_without_kernel_support(cpu_ns_run, tmp_path):
    """Restoring the guest's images on a kernel without CPU namespaces (the
    host): one clear error line, nothing created."""
    if os.path.exists("/proc/self/ns/cpu"):
        pytest.skip("this host has CPU namespaces")
    img = cpu_ns_run["share"] / "img1"
    r = subprocess.run([str(CRIU), "restore", "-D", str(img), "-o", str(tmp_path / "r.log"),
                        "-v4"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    errors = [l for l in r.stderr.splitlines() if "Error" in l]
    log = (tmp_path / "r.log").read_text()
    assert len(errors) == 1, r.stderr
    assert "CPU namespace" in log and "--cpu-ns=ignore" in log, log
