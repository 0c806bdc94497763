#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Dump and restore times of many tasks and of many threads (reports figures,
# asserts nothing): a trivial single process for reference, a tree of N
# processes (the root and N-1 sleeping children), the same tree in a
# cgroup of its own dumped with --freeze-cgroup (the cgroup freezer stops
# it, then criu seizes every task in one pass), and one process with N
# threads (test/bench/tree_bench.c), N = 100 by default.
#
#   scripts/bench-tree.sh [N]
#   scripts/bench-tree.sh curve
#
# "curve" measures how the cost grows (issue 17): trees of 10, 100 and
# 1,000 tasks, processes of 100, 1,000 and 10,000 threads, and the same
# with CPU-time timers armed (ITIMER_PROF, ITIMER_VIRTUAL, a process and
# a per-thread POSIX CPU-time timer in every 10th thread: tree_bench
# timers); the table adds the time per task or thread, against the aims
# (<= 0.3 ms a task, <= 1 s for 10,000 threads). The thread counts are
# bounded by what this machine allows (RLIMIT_NPROC, threads-max,
# pid_max: said so when they are). RUNS is 3 there by default.
#
# Per case: one warm-up round, then RUNS (5) measured rounds of
#   start the target (a session leader) -> criu dump (kills it) ->
#   criu restore -d -> the restored target checks it is whole -> kill, reap
# with the images in /dev/shm and criu at -v4 (as the test suite runs it).
# Each time is the wall clock around the criu command, in ms; the table
# shows the median and the minimum. The aim: <= 50 ms each for N = 100.
#
# For the median round of each case the elapsed time criu's own log records
# is shown too, and where the dump's time went, phase by phase, as criu
# logs it at the end of a dump (freeze, ids, read = status/registers/smaps,
# check, inside = the in-task batches, parts, memory, tree-wide images,
# write, finish = kill and reap); with PROFILE=1 every part's share too.
# With PROFILE=1 (or when a median is above the aim) the slowest steps
# between two log lines of that round and the time spent per task/thread.
#
# Environment: SKIP_BUILD=1, BUILD_DIR, CRIU, CRIU_BEFORE (another criu,
# run in turn with CRIU round by round: before and after a change, under
# the same load), RUNS, PROFILE=1, KEEP=1 (keep the work directory).

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BENCH=$B/test/bench/tree_bench
CURVE=
if [ "${1:-}" = curve ]; then
	CURVE=1
	N=1000
	RUNS=${RUNS:-3}
else
	N=${1:-100}
	RUNS=${RUNS:-5}
fi
AIM=50
# the curve's aims, microseconds per task and per thread
AIM_TASK_US=300
AIM_THREAD_US=100

# Restored targets are orphans once criu exits: run under a reaper.
run_reaped bench-tree "$CRIU" "$BENCH" -- "$@"

WORK=$(mktemp -d /dev/shm/criu-bench-tree.XXXXXX)
PID=
ok=
# the freezer case's cgroup: in the v2 hierarchy (every v2 cgroup but the
# root has cgroup.freeze), else in v1's freezer
FREEZER=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/freezer; do
	if [ -e "$d/cgroup.subtree_control" ] || [ -e "$d/freezer.self_freezing" ] ||
	   [ -e "$d/tasks" -a "$d" = /sys/fs/cgroup/freezer ]; then
		FREEZER=$d/criu-bench-tree-$$
		break
	fi
done

# Kills the target's whole session (every task of it is in it) and waits
# until none is left (the reaper above us reaps them).
kill_target()
{
	local i

	[ -n "$PID" ] || return 0
	if [ "$(cat "/proc/$PID/comm" 2>/dev/null)" = tree_bench ]; then
		kill -KILL -- "-$PID" 2>/dev/null || true
	fi
	for i in $(seq 500); do
		pgrep -s "$PID" >/dev/null 2>&1 || break
		sleep 0.01
	done
	PID=
}

cleanup()
{
	kill_target
	[ -z "$FREEZER" ] || rmdir "$FREEZER" 2>/dev/null || true
	if [ -n "$ok" ] && [ -z "${KEEP:-}" ]; then
		rm -rf "$WORK"
	else
		echo "bench-tree: work directory kept: $WORK"
	fi
}
trap cleanup EXIT

die()
{
	echo "bench-tree: FAIL: $*" >&2
	exit 1
}

wait_file()
{
	local i

	for i in $(seq 2000); do
		[ -s "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

now_us()
{
	local t=$EPOCHREALTIME

	echo $((${t/./} ))
}

# One round of a case; prints "dump_ms restore_ms", keeps the logs in $2.
round()
{
	local mode=$1 dir=$2 t0 t1 t2 t3 v fz=()

	rm -rf "$dir"
	mkdir -p "$dir/img"
	case "$mode" in
	*freezer*)
		# born in the cgroup: the shell joins it, then becomes the tree
		mkdir -p "$FREEZER"
		fz=(--freeze-cgroup "$FREEZER")
		setsid sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" tree "$3" "$4"' sh \
			"$FREEZER" "$BENCH" "$N" "$dir/ready" </dev/null >"$dir/bench.out" 2>&1 &
		;;
	*)
		setsid "$BENCH" $mode "$dir/ready" </dev/null >"$dir/bench.out" 2>&1 &
		;;
	esac
	PID=$!
	disown "$PID"
	wait_file "$dir/ready" || die "$mode: tree_bench did not become ready"
	t0=$(now_us)
	"$CRIU" dump -t "$PID" -D "$dir/img" -o dump.log -v4 "${fz[@]}" ||
		die "$mode: criu dump failed (see $dir/img/dump.log)"
	t1=$(now_us)
	# the dump killed the tree; its pids must be free before the restore
	kill_target
	t2=$(now_us)
	"$CRIU" restore -D "$dir/img" -d -o restore.log -v4 --pidfile "$dir/img/pid" ||
		die "$mode: criu restore failed (see $dir/img/restore.log)"
	t3=$(now_us)
	PID=$(cat "$dir/img/pid")
	kill -USR1 "$PID"
	wait_file "$dir/ready.verify" || die "$mode: the restored target did not answer"
	v=$(cat "$dir/ready.verify")
	[ "$v" = ok ] || die "$mode: the restored target is not whole: $v"
	kill_target
	echo "$(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100))" \
		"$(((t3 - t2) / 1000)).$(((t3 - t2) % 1000 / 100))"
}

# The elapsed time of a -v4 log: the stamp of its last line, in ms.
log_ms()
{
	awk -F'[()]' '/^\(/ { t = $2 } END { printf "%.1f", t * 1000 }' "$1"
}

# The slowest steps of a log: gaps between consecutive stamped lines.
profile()
{
	python3 - "$1" <<'EOF'
import re, sys
from collections import defaultdict
lines = []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\((\d+\.\d+)\) (.*)", line.rstrip("\n"))
    if m:
        lines.append((float(m.group(1)), m.group(2)))
if not lines:
    sys.exit(0)
gaps = sorted(((b[0] - a[0], a[1], b[1]) for a, b in zip(lines, lines[1:])),
              reverse=True)
print("      slowest steps (ms, from the line before to the line):")
for g, a, b in gaps[:6]:
    print(f"      {g * 1000:7.2f}  {a[:60]!r}\n               -> {b[:60]!r}")
# time attributed to each task: from its first to its last line
span = defaultdict(lambda: [1e9, 0.0, 0])
for t, text in lines:
    m = re.match(r"(?:Task|Thread) (\d+)", text)
    if m:
        s = span[m.group(1)]
        s[0] = min(s[0], t)
        s[1] = max(s[1], t)
        s[2] += 1
if span:
    per = sorted((s[1] - s[0], k, s[2]) for k, s in span.items())
    tot = lines[-1][0] - lines[0][0]
    print(f"      {len(span)} tasks/threads named in the log; per task: median "
          f"{per[len(per) // 2][0] * 1000:.2f} ms, max {per[-1][0] * 1000:.2f} ms "
          f"(task {per[-1][1]}); the log spans {tot * 1000:.1f} ms, "
          f"{len(lines)} lines")
EOF
}

stats()
{
	# median and min of a column of numbers on stdin
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.1f %.1f\n", m, v[1] }'
}

echo "criu: $CRIU"
echo "images in $WORK (tmpfs), criu -v4, $RUNS runs after a warm-up, wall clock in ms"
printf '%-32s %10s %10s %10s %10s %12s %12s %10s %10s\n' case "dump med" "dump min" \
	"rst med" "rst min" "dump log" "rst log" "dump/unit" "rst/unit"

# a median over the tasks or threads of the case, in ms
per_unit()
{
	awk -v t="$1" -v n="$2" 'BEGIN { printf "%.3f", t / n }'
}

# "freeze 5.0 ids 1.7 ..." from the phase line criu logs after a dump
phases()
{
	sed -n 's/.*Dump of [0-9]* task(s), ms: //p' "$1" | tail -1
}

# The most threads one process may have here, with room for criu's own
# tasks and the rest of the machine: RLIMIT_NPROC counts every task of
# the user, threads-max and pid_max every task of the machine.
max_threads()
{
	local lim tm pm used

	lim=$(ulimit -u)
	tm=$(cat /proc/sys/kernel/threads-max)
	pm=$(cat /proc/sys/kernel/pid_max)
	used=$(ls /proc | grep -c '^[0-9]')
	[ "$lim" = unlimited ] && lim=$tm
	lim=$((lim < tm ? lim : tm))
	lim=$((lim < pm ? lim : pm))
	echo $((lim - used - 200))
}

over=
breakdown=
if [ -n "$CURVE" ]; then
	cases=("tree 1" "tree 10" "tree 100" "tree 1000")
	most=$(max_threads)
	for n in 100 1000 10000; do
		if [ "$n" -gt "$most" ]; then
			echo "bench-tree: $n threads bounded to $most (RLIMIT_NPROC," \
			     "threads-max, pid_max here)"
			n=$most
		fi
		cases+=("threads $n" "timers $n")
	done
else
	cases=("tree 1" "tree $N")
	[ -z "$FREEZER" ] || cases+=("tree $N freezer")
	cases+=("threads $N")
fi
# CRIU_BEFORE: a second criu (the one before a change), run in turn with
# $CRIU round by round, so that both see the same load; a row each.
crius=("$CRIU")
tags=("")
if [ -n "${CRIU_BEFORE:-}" ]; then
	crius=("$CRIU_BEFORE" "$CRIU")
	tags=(".before" ".after")
	echo "each round runs $CRIU_BEFORE (before) and then $CRIU (after)"
fi

# One row of the table, and the breakdown, for case $1 run as $2 (name.tag).
report_case()
{
	local mode=$1 name=$2 label dmed dmin rmed rmin mi units

	read -r dmed dmin < <(cut -d' ' -f1 "$WORK/$name.times" | stats)
	read -r rmed rmin < <(cut -d' ' -f2 "$WORK/$name.times" | stats)
	# the round whose dump time is the median, for the logs
	mi=$(awk '{ print $1, NR }' "$WORK/$name.times" | sort -n |
	     awk -v n="$RUNS" 'NR == int((n + 1) / 2) { print $2 }')
	units=$(echo "$mode" | cut -d' ' -f2)
	label="$([ "$mode" = "tree 1" ] && echo "trivial process" ||
		 echo "${mode/freezer/--freeze-cgroup}")"
	case "$name" in
	*.before) label="$label (before)" ;;
	*.after) label="$label (after)" ;;
	esac
	printf '%-32s %10s %10s %10s %10s %12s %12s %10s %10s\n' \
		"$label" "$dmed" "$dmin" "$rmed" "$rmin" \
		"$(log_ms "$WORK/$name.$mi/img/dump.log")" \
		"$(log_ms "$WORK/$name.$mi/img/restore.log")" \
		"$(per_unit "$dmed" "$units")" "$(per_unit "$rmed" "$units")"
	if [ "$mode" != "tree 1" ]; then
		breakdown="$breakdown$(printf '%-24s %s' "${label#trivial process}" \
			"$(phases "$WORK/$name.$mi/img/dump.log")")
"
		if [ -n "${PROFILE:-}" ]; then
			breakdown="$breakdown$(printf '%-24s %s' "" "$(sed -n \
				's/.*Dump, ms per part (check+dump, from 0.1)://p' \
				"$WORK/$name.$mi/img/dump.log" | tail -1)")
"
		fi
	fi
	if [ -n "${PROFILE:-}" ] || { [ -z "$CURVE" ] &&
		awk -v a="$dmed" -v b="$rmed" -v m="$AIM" 'BEGIN { exit !(a > m || b > m) }'; }; then
		[ "$mode" = "tree 1" ] || over="$over $name.$mi"
	fi
}

for mode in "${cases[@]}"; do
	base=${mode// /-}
	for k in "${!crius[@]}"; do
		CRIU=${crius[$k]} round "$mode" "$WORK/$base${tags[$k]}.warm" >/dev/null
		: >"$WORK/$base${tags[$k]}.times"
	done
	for i in $(seq "$RUNS"); do
		for k in "${!crius[@]}"; do
			CRIU=${crius[$k]} round "$mode" "$WORK/$base${tags[$k]}.$i" \
				>>"$WORK/$base${tags[$k]}.times"
		done
	done
	for k in "${!crius[@]}"; do
		report_case "$mode" "$base${tags[$k]}"
	done
done
if [ -n "$CURVE" ]; then
	echo "aim: <= $AIM_TASK_US us per task (tree 1000), <= $AIM_THREAD_US us per thread" \
	     "(threads 10000), dump and restore; unit = task or thread, ms"
else
	echo "aim: <= $AIM ms for the dump and for the restore of $N tasks and of $N threads"
fi
echo "where the dump's time went (median round, ms, from criu's log):"
printf '%s' "$breakdown"

for r in $over; do
	for what in dump restore; do
		echo "--- $r: $what (run $(echo "$r" | sed 's/.*\.//'), -v4 log)"
		profile "$WORK/$r/img/$what.log"
	done
done
ok=1
