#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The vDSO fast path after a restore: calls of clock_gettime(CLOCK_MONOTONIC)
# per second in a restored task versus a fresh task in a fresh time
# namespace, measured in the same run (test/bench/vdso_bench.c).
#
#   scripts/bench-vdso.sh [--strict]
#
# Starts `vdso_bench wait` pinned to CPU 0 (it warms up and waits), dumps
# it with criu, restores it with criu restore -d (its affinity comes back
# with it). Then ROUNDS (3) times, alternately: `vdso_bench fresh`, pinned to
# CPU 0 too, measures in a child born in a new time namespace
# (unshare(CLONE_NEWTIME) + fork), and the restored task, on SIGUSR1,
# measures the same way. Each measurement: ~1 s of clock_gettime() and ~1 s
# of the raw system call, each the median of 10 slices of 100 ms; the best
# round of each task is compared (the least disturbed by the rest of the
# machine). Both also count exactly how many of 100000 clock_gettime() calls
# entered the kernel (a seccomp filter makes the system call fail; see
# vdso_bench.c): 0 means the vDSO answered every one.
#
# Prints every round, the best rates and the ratio restored/fresh (the aim:
# >= 90 %). Exit status: non-zero when criu fails or when a clock_gettime()
# of the restored task entered the kernel; with --strict also when the ratio
# is below the aim. Environment: SKIP_BUILD=1, BUILD_DIR, CRIU, ROUNDS,
# KEEP=1 (keep the work dir); CRIU_VDSO_REDIRECT=1 reaches criu and makes
# the restore redirect the task's vDSO as on another kernel (its glibc
# then calls through the old entry points' jumps: the cost of the redirect).

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BENCH=$B/test/bench/vdso_bench
AIM=90
ROUNDS=${ROUNDS:-3}
STRICT=
[ "${1:-}" = --strict ] && STRICT=1

# Run under a subreaper: the restored task is an orphan once criu exits,
# and must be reaped when it is done (PID 1 here may not do it).
run_reaped bench-vdso "$CRIU" "$BENCH" -- "$@"

WORK=$(mktemp -d /tmp/criu-bench-vdso.XXXXXX)
IMG=$WORK/images
mkdir -p "$IMG"
PID=
ok=

cleanup()
{
	if [ -n "$PID" ] && [ "$(cat "/proc/$PID/comm" 2>/dev/null)" = vdso_bench ]; then
		kill -KILL "$PID" 2>/dev/null || true
	fi
	if [ -n "$ok" ] && [ -z "${KEEP:-}" ]; then
		rm -rf "$WORK"
	else
		echo "bench-vdso: work directory kept: $WORK"
	fi
}
trap cleanup EXIT

die()
{
	echo "bench-vdso: FAIL: $*" >&2
	for f in "$IMG/dump.log" "$IMG/restore.log"; do
		[ -f "$f" ] && tail -n 5 "$f" >&2
	done
	exit 1
}

# key=value from a figures file
val()
{
	sed -n "s/^$2=//p" "$1"
}

# Waits up to 20 s for a file to appear (written whole, then renamed).
wait_file()
{
	local i

	for i in $(seq 200); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# --- the task to restore
taskset -c 0 setsid "$BENCH" wait "$WORK/restored" </dev/null >"$WORK/bench.out" 2>&1 &
PID=$!
disown "$PID"
wait_file "$WORK/bench.out" || die "vdso_bench did not start"
"$CRIU" dump -t "$PID" -D "$IMG" -o dump.log -v4 || die "criu dump failed"
"$CRIU" restore -D "$IMG" -d -o restore.log -v4 --pidfile "$IMG/pid" ||
	die "criu restore failed"
[ "$(cat "$IMG/pid")" = "$PID" ] || die "restored with another pid"

# --- alternate rounds: fresh, restored
printf '%-6s %-34s %14s %16s %12s\n' round task "vDSO calls/s" "syscall calls/s" \
	"in kernel"
best_r=0 best_f=0 kern=0
for i in $(seq "$ROUNDS"); do
	taskset -c 0 "$BENCH" fresh "$WORK/fresh.$i" || die "vdso_bench fresh failed"
	kill -USR1 "$PID"
	wait_file "$WORK/restored.$i" || die "the restored task did not measure"
	for t in fresh restored; do
		f=$WORK/$t.$i
		v=$(val "$f" vdso_rate)
		k=$(val "$f" vdso_syscalls)
		printf '%-6s %-34s %14s %16s %12s\n' "$i" \
			"$([ $t = fresh ] && echo "fresh task, fresh time ns" ||
			   echo "restored task (criu's time ns)")" \
			"$v" "$(val "$f" syscall_rate)" "$k/$(val "$f" probe_calls)"
		if [ $t = fresh ]; then
			[ "$v" -gt "$best_f" ] && best_f=$v
		else
			[ "$v" -gt "$best_r" ] && best_r=$v
			[ "$k" -lt 0 ] && die "round $i: could not count kernel entries"
			kern=$((kern + k))
		fi
	done
done
kill -TERM "$PID"
for i in $(seq 50); do
	[ -e "/proc/$PID" ] || break
	sleep 0.1
done
PID=

ratio=$(awk -v a="$best_r" -v b="$best_f" 'BEGIN { printf "%.1f", 100 * a / b }')
echo "best: restored $best_r/s, fresh $best_f/s: restored / fresh = $ratio %" \
	"(aim: >= $AIM %)"
echo "time namespaces: restored $(val "$WORK/restored.1" time_ns)," \
	"fresh $(val "$WORK/fresh.1" time_ns), this script $(readlink /proc/self/ns/time)"

status=0
if [ "$kern" != 0 ]; then
	echo "bench-vdso: FAIL: $kern clock_gettime() calls of the restored task" \
		"entered the kernel" >&2
	status=1
fi
if awk -v r="$ratio" -v a="$AIM" 'BEGIN { exit !(r < a) }'; then
	echo "bench-vdso: below the aim of $AIM %" >&2
	[ -n "$STRICT" ] && status=1
fi
[ "$status" = 0 ] && ok=1
exit "$status"
