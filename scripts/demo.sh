#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo: checkpoint a running program, let time pass, restore it.
#
#   scripts/demo.sh
#
# Installs the dependencies, builds, then starts build/contrib/demo/counter
# (a program that logs a counter and both clocks every second), dumps it with
# `criu dump` (which kills it), waits, restores it with `criu restore -d`, lets
# it run again and reads its log to show that it is the same process: same
# pid, the counter went on where it stopped, CLOCK_MONOTONIC did not see the
# gap while CLOCK_REALTIME did.  Prints PASS or FAIL and exits 0 or 1.
#
# Environment: SKIP_DEPS=1 skips the install, SKIP_BUILD=1 the build;
# CRIU=path picks another criu binary; KEEP=1 keeps the work directory
# (it is always kept on failure); GAP=seconds sets the downtime (default 3).

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COUNTER=$B/contrib/demo/counter
GAP=${GAP:-3}

say()
{
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

# Phase 1: install, build, and re-run this script under a subreaper.  PID 1
# here may not reap orphans: the restored counter is an orphan once criu
# exits, and after we kill it somebody must reap it or its pid stays taken.
if ! reaped; then
	if [ -z "${SKIP_DEPS:-}" ]; then
		say "installing dependencies (scripts/install-deps.sh)"
		scripts/install-deps.sh
	fi
	[ -n "${SKIP_BUILD:-}" ] || say "building (scripts/build.sh)"
fi
run_reaped "demo: FAIL" "$CRIU" "$COUNTER" -- "$@"

# Phase 2: the demo itself.
WORK=$(mktemp -d /tmp/criu-demo.XXXXXX)
IMGDIR=$WORK/images
LOG=$WORK/counter.log
mkdir -p "$IMGDIR"
PID=
verdict=1

# Is $1 our counter (and not a process that got its pid later)?
is_counter()
{
	[ -n "$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = counter ]
}

# Is $1 gone for good (no process, not even a zombie)?
wait_gone()
{
	local i

	for i in $(seq 50); do
		[ -e "/proc/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

cleanup()
{
	if is_counter "$PID"; then
		kill -KILL "$PID" 2>/dev/null || true
		wait_gone "$PID" || true
	fi
	if [ "$verdict" = 0 ] && [ -z "${KEEP:-}" ]; then
		rm -rf "$WORK"
	else
		echo "demo: work directory kept: $WORK (images, dump.log, restore.log, counter.log)"
	fi
}
trap cleanup EXIT

fail()
{
	echo
	echo "demo: FAIL: $*"
	exit 1
}

show_log_tail()
{
	[ -f "$1" ] || return 0
	echo "---- last lines of $1 ----"
	tail -n "${2:-15}" "$1"
	echo "----"
}

echo "criu: $("$CRIU" --version 2>&1 | head -n 1)"

say "starting the counter (setsid, stdio on /dev/null, logging to $LOG)"
# No job control in a script: the background child is not a group leader,
# so setsid(1) calls setsid() and execs in place, keeping this pid.
setsid "$COUNTER" "$LOG" </dev/null >/dev/null 2>&1 &
PID=$!
# bash still reaps it, but stops tracking it as a job: no "Killed" notice
# when the dump kills it.
disown "$PID"
sleep 0.2
is_counter "$PID" || fail "the counter did not start"
ps -o pid,ppid,sid,stat,cmd -p "$PID"
sleep "$GAP"
cat "$LOG"

say "criu dump -t $PID -D $IMGDIR -o dump.log"
rc=0
"$CRIU" dump -t "$PID" -D "$IMGDIR" -o dump.log || rc=$?
if [ "$rc" != 0 ]; then
	show_log_tail "$IMGDIR/dump.log"
	fail "criu dump exited with status $rc"
fi
ls -l "$IMGDIR"

say "the counter is gone"
if ! wait_gone "$PID"; then
	ps -o pid,stat,cmd -p "$PID" || true
	fail "pid $PID still exists after the dump"
fi
echo "ps -p $PID: $(ps -o pid= -p "$PID" || echo 'no such process')"
lines_at_dump=$(wc -l <"$LOG")

say "waiting ${GAP}s with the counter checkpointed"
sleep "$GAP"
[ "$(wc -l <"$LOG")" = "$lines_at_dump" ] || fail "the log grew while the counter was dumped"

say "criu restore -D $IMGDIR -d -o restore.log"
rc=0
"$CRIU" restore -D "$IMGDIR" -d -o restore.log || rc=$?
if [ "$rc" != 0 ]; then
	show_log_tail "$IMGDIR/restore.log"
	fail "criu restore exited with status $rc"
fi
is_counter "$PID" || fail "no counter runs as pid $PID after the restore"
ps -o pid,ppid,sid,stat,cmd -p "$PID"

sleep "$GAP"
is_counter "$PID" || fail "the restored counter died (see $LOG)"
alive=$(awk '{ print $3 }' "/proc/$PID/stat")
kill -KILL "$PID"
wait_gone "$PID" || fail "the killed counter (pid $PID) was not reaped"
echo "killed the restored counter (state was $alive); pid $PID reaped"

say "the counter's log ($LOG)"
cat "$LOG"

say "verdict"
# Read the log: same pid, counter steps by one, one big wall-clock gap, across
# which CLOCK_MONOTONIC moved as little as between two ordinary ticks.
awk -v pid="$PID" -v gap="$GAP" -v dumped="$lines_at_dump" '
function val(s) { sub(/^[a-z]+=/, "", s); return s + 0 }
{
	n++
	c[n] = val($1); p[n] = val($2); m[n] = val($3); r[n] = val($4)
}
END {
	bad = ""
	if (n < 5)
		bad = bad "\n  only " n " lines in the log"
	for (i = 1; i <= n; i++) {
		if (p[i] != pid)
			bad = bad "\n  line " i ": pid " p[i] ", expected " pid
		if (i > 1 && c[i] != c[i - 1] + 1)
			bad = bad "\n  line " i ": count " c[i] " after " c[i - 1]
		if (i > 1 && m[i] < m[i - 1])
			bad = bad "\n  line " i ": CLOCK_MONOTONIC went back"
	}
	# The gap is between the last line written before the dump and the next.
	g = dumped
	if (g < 1 || g >= n) {
		bad = bad "\n  no line was written after the restore"
	} else {
		dm = m[g + 1] - m[g]
		dr = r[g + 1] - r[g]
		printf "before the dump:   count=%d pid=%d mono=%.3f real=%.3f\n", c[g], p[g], m[g], r[g]
		printf "after the restore: count=%d pid=%d mono=%.3f real=%.3f\n", c[g + 1], p[g + 1], m[g + 1], r[g + 1]
		printf "across the checkpoint: CLOCK_MONOTONIC +%.3f s, CLOCK_REALTIME +%.3f s\n", dm, dr
		printf "lines before the dump: %d, after the restore: %d\n", g, n - g
		if (n - g < 2)
			bad = bad "\n  the restored counter wrote fewer than 2 lines"
		if (dm > 1.5)
			bad = bad sprintf("\n  CLOCK_MONOTONIC jumped by %.3f s across the gap (expected about 1 s)", dm)
		if (dr < gap)
			bad = bad sprintf("\n  CLOCK_REALTIME moved only %.3f s across a gap of at least %d s", dr, gap)
	}
	if (bad != "") {
		print "FAIL:" bad
		exit 1
	}
	printf "PASS: same pid %d; the counter continued %d -> %d (no restart); " \
	       "CLOCK_MONOTONIC did not jump (+%.3f s) while CLOCK_REALTIME did (+%.3f s)\n",
	       pid, c[g], c[g + 1], dm, dr
}' "$LOG" && verdict=0

exit "$verdict"
