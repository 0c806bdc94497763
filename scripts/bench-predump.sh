#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Iterative dumps (Documentation/pre-dump.md), a benchmark: it reports, it
# asserts nothing. Two parts, each in one run of one target process
# (test/bench/predump_writer):
#
#  1. The cost of tracking to a task that writes memory: a loop writing one
#     word in every page of SIZE MiB, pass after pass. The pass time before
#     any tracking (the reference), the first pass after a pre-dump
#     --track-mem protected every page (each page takes one fault: the
#     cost of a round to the task), and the passes after that (steady
#     state: pages already unprotected cost nothing). Then ROUNDS more
#     rounds, each protecting every page again: the first pass after each.
#  2. Rounds of a task writing RATE MiB/s of random pages of SIZE MiB:
#     a pre-dump, ROUNDS pre-dumps one second apart, the final dump; per
#     round, the wall time of criu, the time the tree was frozen (criu's
#     log), the bytes stored and those left in the parent.
#
# Usage: scripts/bench-predump.sh [SIZE_MIB [RATE_MIBPS [ROUNDS]]]
#        (default 256 32 4; root; the kernel must have UFFD_FEATURE_WP_ASYNC)
set -eu

CRIU=${CRIU:-$(dirname "$0")/../build/criu/criu}
CRIU=$(realpath "$CRIU")
WRITER=$(realpath "${WRITER:-$(dirname "$0")/../build/test/bench/predump_writer}")
SIZE=${1:-256}
RATE=${2:-32}
ROUNDS=${3:-4}
WORK=$(mktemp -d /tmp/bench-predump.XXXXXX)
PID=

cleanup() {
	[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true
	# the trackers of rounds left behind (an interrupted run) exit with the task
	rm -rf "$WORK"
}
trap cleanup EXIT

if ! "$CRIU" check --feature mem_dirty_track >/dev/null 2>&1; then
	echo "bench-predump: $("$CRIU" check --feature mem_dirty_track 2>&1)" >&2
	exit 1
fi

# start RATE: the writer, in a session of its own, as criu wants it
start() {
	rm -f "$WORK/ready" "$WORK/log"
	setsid "$WRITER" "$SIZE" "$1" "$WORK/log" "$WORK/ready" &
	disown
	while [ ! -s "$WORK/ready" ]; do sleep 0.01; done
	PID=$(cat "$WORK/ready")
}

stop() {
	kill -9 "$PID" 2>/dev/null || true
	PID=
}

# round CMD DIR [PREV]: one criu run; prints "ms frozen_ms stored_MiB parent_MiB"
round() {
	local cmd=$1 dir=$WORK/$2 prev=${3:-} t0 t1 args=()
	mkdir -p "$dir"
	[ -n "$prev" ] && args=(--prev-images-dir "../$prev")
	t0=$(date +%s%N)
	if ! "$CRIU" "$cmd" -t "$PID" -D "$dir" -o dump.log -v4 --track-mem "${args[@]}"; then
		echo "bench-predump: criu $cmd failed (see $dir/dump.log)" >&2
		kill -9 "$PID" 2>/dev/null
		exit 1
	fi
	t1=$(date +%s%N)
	awk -v ms=$(((t1 - t0) / 1000000)) -v pid="$PID" '
		/Dump of .* task\(s\), ms:/ {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $(i-1) != "of") f += $i
			for (i = 1; i <= NF; i++) if ($i == "finish") f -= $(i+1)
		}
		/unchanged since the previous round/ {
			for (i = 1; i <= NF; i++) if ($i == "unchanged") p += $(i-1)
		}
		END { printf "%6d %9.1f", ms, f }' "$dir/dump.log"
	awk -v s="$(stat -c %s "$dir/pages-$PID.img")" -v p="$(grep -o '[0-9]* unchanged since' "$dir/dump.log" | awk '{s += $1} END {print s + 0}')" \
		'BEGIN { printf " %10.1f %10.1f\n", s / 1048576, p / 1048576 }'
}

median_from() {
	tail -n +"$1" "$WORK/log" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1e6 }'
}

lines() {
	wc -l < "$WORK/log"
}

# fault_cost FROM FROZEN_MS: the pass that spans the round (the longest) and
# the next one, less the freeze and two reference passes: what the faults
# on the protected pages cost the task
fault_cost() {
	tail -n +"$1" "$WORK/log" | awk -v f="$2" -v r="$ref" -v n=$((SIZE * 256)) '
		{ t[NR] = $1 / 1e6; if (t[NR] > t[m]) m = NR }
		END { c = t[m] + t[m + 1] - f - 2 * r
		      printf "%.1f ms (%.0f ns/page)", c, c * 1e6 / n }'
}

# wait_passes N: until N more passes are logged
wait_passes() {
	local want=$(($(lines) + $1))
	while [ "$(lines)" -lt "$want" ]; do sleep 0.05; done
}

echo "== 1. tracking's cost to a task writing every page of $SIZE MiB, pass after pass"
start 0
wait_passes 10
base=$(lines)
wait_passes 10
ref=$(median_from $((base + 1)))
echo "untracked: median pass ${ref} ms ($(awk -v r="$ref" -v s="$SIZE" 'BEGIN { printf "%.0f", r * 1e6 / (s * 256) }') ns/page)"
mark=$(lines)
r=$(round pre-dump r0)
wait_passes 12
echo "first pre-dump --track-mem (ms frozen_ms stored_MiB parent_MiB: $r)"
echo "  every page protected: faults cost $(fault_cost $((mark + 1)) "$(echo $r | cut -d' ' -f2)")"
mark=$(lines)
wait_passes 10
echo "tracked, steady: median pass $(median_from $((mark + 1))) ms (the reference: ${ref} ms)"
prev=r0
for i in $(seq 1 "$ROUNDS"); do
	mark=$(lines)
	r=$(round pre-dump "r$i" "$prev")
	prev=r$i
	wait_passes 12
	echo "round $i (ms frozen_ms stored_MiB parent_MiB: $r)"
	echo "  every page written, so protected again: faults cost $(fault_cost $((mark + 1)) "$(echo $r | cut -d' ' -f2)")"
done
stop

echo
echo "== 2. rounds of a task writing $RATE MiB/s of random pages of $SIZE MiB"
start "$RATE"
sleep 1
printf "%-10s %6s %9s %10s %10s\n" round ms frozen_ms stored_MiB parent_MiB
printf "%-10s %s\n" pre-dump "$(round pre-dump p0)"
prev=p0
for i in $(seq 1 "$ROUNDS"); do
	sleep 1
	printf "%-10s %s\n" "pre-dump" "$(round pre-dump "p$i" "$prev")"
	prev=p$i
done
sleep 1
printf "%-10s %s\n" dump "$(round dump final "$prev")"
kill -9 "$PID" 2>/dev/null || true	# a failed dump left it running
PID=
echo "(a plain dump of the same task would store about the first round's bytes)"
