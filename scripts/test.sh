#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The tests: install the dependencies, build, then run
#   1. the unit tests           meson test -C build --print-errorlogs
#   2. the python unit tests    pytest test/unit       (when there are any)
#   3. the zdtm suite           pytest test/zdtm
#   4. a short fuzz run         test/fuzz/run.sh 60 (builds the libFuzzer target)
#   5. the kernel tests         scripts/kernel-build.sh, pytest -m kernel test/kernel
#      (the patched kernel of kernel/ under QEMU, criu inside it; skipped
#      when qemu-system-x86 can't be installed)
#   6. the types                mypy (mypy.ini) of crit.py and the Python of test/
# Every step runs even when an earlier one failed; the exit status is 0 only
# when all of them passed. The summary counts the tests passed, failed and
# skipped (pytest's xfailed count as skipped, as meson's expected failures
# do) and lists every skip with its reason.
#
# Environment: SKIP_DEPS=1 skips the install, SKIP_BUILD=1 the build,
# FUZZ_TIME=seconds sets the fuzz run's length (0 skips it), SKIP_KERNEL=1
# skips the kernel tests,
# PYTEST_ARGS adds arguments to both pytest runs (e.g. "-k timerfd").

set -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FUZZ_TIME=${FUZZ_TIME:-60}
PYTEST_ARGS=${PYTEST_ARGS:-}

failed=()
passed=()
# Test counts gathered from the runners' own summaries, for the last line.
n_passed=0
n_failed=0
n_skipped=0
failed_before_step=0
OUT=$(mktemp /tmp/criu-test-out.XXXXXX)
SKIPS=$(mktemp /tmp/criu-test-skips.XXXXXX)
FAILS=$(mktemp /tmp/criu-test-fails.XXXXXX)
trap 'rm -f "$OUT" "$SKIPS" "$FAILS"' EXIT

# count FILE: add up a pytest summary ("3 passed, 1 failed, 2 skipped in 1s")
# or a meson one ("Ok: 3", "Fail: 1", "Skipped: 2") found in FILE.
count()
{
	local line n

	line=$(grep -E '^=* *[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran' "$1" | tail -n 1)
	if [ -n "$line" ]; then
		n=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
		n_passed=$((n_passed + ${n:-0}))
		n=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$line" | cut -d' ' -f1 | awk '{ s += $1 } END { print s + 0 }')
		n_failed=$((n_failed + ${n:-0}))
		n=$(grep -oE '[0-9]+ (skipped|xfailed)' <<<"$line" | cut -d' ' -f1 | awk '{ s += $1 } END { print s + 0 }')
		n_skipped=$((n_skipped + ${n:-0}))
		# pytest -rfEsx: "SKIPPED [N] where: reason", "XFAIL test - reason"
		grep -E '^(SKIPPED|XFAIL) ' "$1" >>"$SKIPS"
		# -rfE: "FAILED test::name - reason", named again in the summary
		grep -E '^(FAILED|ERROR) ' "$1" | cut -c1-300 >>"$FAILS"
		return
	fi
	n=$(grep -oE '^Ok: +[0-9]+' "$1" | grep -oE '[0-9]+$')
	n_passed=$((n_passed + ${n:-0}))
	n=$(grep -oE '^(Fail|Unexpected Pass|Timeout): +[0-9]+' "$1" | grep -oE '[0-9]+$' | awk '{ s += $1 } END { print s + 0 }')
	n_failed=$((n_failed + ${n:-0}))
	n=$(grep -oE '^(Skipped|Expected Fail): +[0-9]+' "$1" | grep -oE '[0-9]+$' | awk '{ s += $1 } END { print s + 0 }')
	n_skipped=$((n_skipped + ${n:-0}))
}

step()
{
	failed_before_step=$n_failed
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

result()
{
	local name=$1 rc=$2

	if [ "$rc" = 0 ]; then
		passed+=("$name")
	else
		failed+=("$name (exit $rc)")
		# A runner that failed without counting a failed test (a crash,
		# a build error) still counts as one failure.
		[ "$n_failed" != "$failed_before_step" ] || n_failed=$((n_failed + 1))
	fi
}

if [ -z "${SKIP_DEPS:-}" ]; then
	step "dependencies"
	scripts/install-deps.sh || { echo "test: FAIL: installing dependencies" >&2; exit 1; }
fi
if [ -z "${SKIP_BUILD:-}" ]; then
	step "build"
	BUILD_DIR=$BUILD_DIR scripts/build.sh || { echo "test: FAIL: build" >&2; exit 1; }
fi

# The zdtm runner finds criu and its test programs through these.
export CRIU ZDTM_BUILD

# The python that has pytest and protobuf: the one on PATH may be a private
# install (pyenv) without Debian's python3-protobuf.
PYTHON=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import pytest, google.protobuf' >/dev/null 2>&1; then
		PYTHON=$(command -v "$py")
		break
	fi
done
[ -n "$PYTHON" ] || { echo "test: FAIL: no python3 with pytest and protobuf" >&2; exit 1; }
export PYTHON

# Does DIR hold pytest tests?  (pytest's exit 5, "no tests collected", is only
# a failure where there are tests to collect.)
has_pytests()
{
	[ -d "$1" ] && [ -n "$(find "$1" -name 'test_*.py' -o -name '*_test.py' | head -n 1)" ]
}

run_pytest()
{
	local name=$1 dir=$2 rc=0

	step "$name: $PYTHON -m pytest -q $dir"
	# shellcheck disable=SC2086
	"$PYTHON" -m pytest -q -rfEsx $PYTEST_ARGS "${@:3}" "$dir" 2>&1 | tee "$OUT" || rc=$?
	count "$OUT"
	if [ "$rc" = 5 ] && ! has_pytests "$dir"; then
		echo "($dir has no tests yet)"
		rc=0
	fi
	result "$name" "$rc"
}

# 1. Unit tests registered with meson (none is a pass).
step "unit tests: meson test -C $BUILD_DIR --print-errorlogs"
rc=0
meson test -C "$BUILD_DIR" --print-errorlogs 2>&1 | tee "$OUT" || rc=$?
count "$OUT"
result "meson test" "$rc"

# 2. Python unit tests, if test/unit has any.
if has_pytests test/unit; then
	run_pytest "unit tests (python)" test/unit
fi

# 3. The zdtm suite.
if [ -d test/zdtm ]; then
	# the slowest, to keep the suite's time in view
	run_pytest zdtm test/zdtm --durations=25
else
	echo "(no test/zdtm)"
fi

# 4. A short fuzz run of the image readers, the /proc parsers, the RPC
# decoder and the command line.  test/fuzz/run.sh (the fuzz targets' own
# runner) builds build/test/fuzz/fuzz_* with clang when needed, seeds them
# and splits the time; without it, a fuzz_image that is already built runs
# on a scratch corpus seeded from test/fuzz/corpus.
FUZZER=$BUILD_DIR/test/fuzz/fuzz_image
if [ "$FUZZ_TIME" != 0 ] && { [ -x test/fuzz/run.sh ] || [ -x "$FUZZER" ]; }; then
	fuzz_dir=$(mktemp -d /tmp/criu-fuzz.XXXXXX)
	rc=0
	if [ -x test/fuzz/run.sh ]; then
		step "fuzz: test/fuzz/run.sh $FUZZ_TIME"
		BUILD_DIR=$BUILD_DIR PYTHON=$PYTHON test/fuzz/run.sh "$FUZZ_TIME" \
			>"$fuzz_dir/fuzz.log" 2>&1 || rc=$?
	else
		step "fuzz: $FUZZER -max_total_time=$FUZZ_TIME"
		mkdir -p "$fuzz_dir/corpus" "$fuzz_dir/crashes"
		cp -r test/fuzz/corpus/. "$fuzz_dir/corpus/"
		"$FUZZER" -max_total_time="$FUZZ_TIME" -print_final_stats=1 \
			-artifact_prefix="$fuzz_dir/crashes/" \
			"$fuzz_dir/corpus" >"$fuzz_dir/fuzz.log" 2>&1 || rc=$?
	fi
	grep -E '^(run\.sh:|build\.sh:|stat::number_of_executed_units|stat::new_units_added|Done )' \
		"$fuzz_dir/fuzz.log" | awk '!seen[$0]++'
	if [ "$rc" = 0 ]; then
		rm -rf "$fuzz_dir"
	else
		grep -E 'ERROR|SUMMARY|Test unit written|error:' "$fuzz_dir/fuzz.log" | head -n 20
		echo "fuzz: failed; its output is in $fuzz_dir/fuzz.log"
	fi
	result "fuzz" "$rc"
	[ "$rc" = 0 ] && n_passed=$((n_passed + 1))
fi

# 5. The patched kernel (kernel/), booted under QEMU with criu inside
# (test/kernel). The build is cached in ~/.cache/criu-kernel (5-7 minutes
# from scratch on 2 CPUs, under a second when nothing changed); the tests
# take about 4 minutes.
if [ -z "${SKIP_KERNEL:-}" ] && [ -d test/kernel ]; then
	if command -v qemu-system-x86_64 >/dev/null ||
	   apt-cache show qemu-system-x86 >/dev/null 2>&1; then
		step "kernel: scripts/kernel-build.sh, $PYTHON -m pytest -q -m kernel test/kernel"
		rc=0
		scripts/kernel-build.sh -q >"$OUT" 2>&1 || rc=$?
		if [ "$rc" = 0 ]; then
			# shellcheck disable=SC2086
			"$PYTHON" -m pytest -q -rfEsx $PYTEST_ARGS -m kernel test/kernel 2>&1 | tee "$OUT" ||
				rc=$?
			count "$OUT"
		else
			tail -n 30 "$OUT"
			echo "kernel: the build failed"
		fi
		result "kernel" "$rc"
	else
		echo "(kernel tests skipped: qemu-system-x86 can't be installed here)"
	fi
fi

# 6. The types of the Python (mypy.ini says what and how strictly): one
# test, passed when mypy finds nothing. Two runs, as test/zdtm and
# test/kernel both have a conftest.py. Debian's mypy (install-deps.sh).
MYPY=()
if "$PYTHON" -m mypy --version >/dev/null 2>&1; then
	MYPY=("$PYTHON" -m mypy)
elif command -v mypy >/dev/null; then
	MYPY=(mypy)
fi
step "types: ${MYPY[*]:-mypy} (mypy.ini)"
rc=0
if [ "${#MYPY[@]}" = 0 ]; then
	echo "types: no mypy (scripts/install-deps.sh installs it)"
	rc=1
else
	"${MYPY[@]}" --version
	for dirs in "contrib/crit contrib/migrate test/zdtm test/unit test/bench" test/kernel; do
		# shellcheck disable=SC2086
		"${MYPY[@]}" $dirs || rc=$?
	done
fi
result "types" "$rc"
[ "$rc" = 0 ] && n_passed=$((n_passed + 1))

step "summary"
for p in "${passed[@]}"; do
	echo "  ok      $p"
done
for f in "${failed[@]}"; do
	echo "  FAILED  $f"
done
if [ -s "$SKIPS" ]; then
	echo "  skipped, and why:"
	sed 's/^/    /' "$SKIPS"
fi
# the failed tests by name, last, where a CI log's tail keeps them
sed 's/^/failed test: /' "$FAILS"
verdict=PASS
[ "${#failed[@]}" != 0 ] && verdict=FAIL
echo "test: $verdict"
echo "tests: $n_passed passed, $n_failed failed, $n_skipped skipped"
[ "$verdict" = PASS ]
