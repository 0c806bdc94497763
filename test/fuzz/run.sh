#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fuzzes the image reader:
#   test/fuzz/run.sh [SECONDS] [libFuzzer options...]   (default 60 s)
#   test/fuzz/run.sh --update-corpus                     remake test/fuzz/corpus
# Builds build/test/fuzz/fuzz_image when it is missing or older than its
# sources, makes seeds, then runs libFuzzer on a working corpus kept in
# build/test/fuzz/corpus (it grows from run to run).
#
# Seeds (an input is one byte naming the image type, in the order of enum
# img_type, followed by the image file):
#   - the images of a real dump of a sleeping session leader, when
#     build/criu/criu works here (it needs root);
#   - test/fuzz/seeds/*.json, hand-made images of every kind, encoded by
#     contrib/crit/crit.py;
#   - test/fuzz/corpus/, if there is one (what scripts/test.sh fuzzes from).
# A crash leaves its input in build/test/fuzz/crashes/ and the exit status 1;
# replay it with: build/test/fuzz/fuzz_image build/test/fuzz/crashes/crash-...

set -o errexit -o nounset -o pipefail

cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=$BUILD_DIR/test/fuzz
FUZZER=$OUT/fuzz_image
CRIU=${CRIU:-$BUILD_DIR/criu/criu}
PYTHON=${PYTHON:-python3}

update_corpus=0
time=60
if [ "${1:-}" = "--update-corpus" ]; then
	update_corpus=1
	shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
	time=$1
	shift
fi

# Build when needed.
if [ ! -x "$FUZZER" ] || [ -n "$(find test/fuzz/fuzz_image.c test/fuzz/build.sh criu/image \
		criu/core images -newer "$FUZZER" -type f 2>/dev/null | head -n 1)" ]; then
	test/fuzz/build.sh
fi

# The image types in enum img_type order, as file name prefixes: IMG_MM -> mm.
mapfile -t types < <(sed -n '/^enum img_type {/,/};/p' criu/image/image.h |
		     grep -oE '^[[:space:]]*IMG_[A-Z0-9_]+' | tr -d ' \t' |
		     grep -vx IMG_NR | sed 's/^IMG_//' | tr 'A-Z' 'a-z')

# add_seed KIND FILE ORIGIN: a seed for image FILE of KIND.
add_seed()
{
	local i

	for i in "${!types[@]}"; do
		if [ "${types[$i]}" = "$1" ]; then
			{ printf "\\x$(printf %02x "$i")"; cat "$2"; } >"$SEEDS/$3-$(basename "$2")"
			return 0
		fi
	done
	echo "run.sh: no image type '$1' in criu/image/image.h; $2 not used" >&2
}

SEEDS=$OUT/seeds
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$OUT/corpus" "$OUT/crashes"
scratch=$(mktemp -d /tmp/criu-fuzz-seeds.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# 1. A real dump.
if [ -x "$CRIU" ] && [ "$(id -u)" = 0 ]; then
	# A session leader with nothing but /dev/null open (criu does not dump
	# pipes, and this shell may hold some). It runs under a subshell that
	# reaps it, so that its death by criu's SIGKILL is no job notice here.
	( "$PYTHON" -c 'import os; os.closerange(3, 1 << 16); os.setsid();
os.execvp("sleep", ["sleep", "1000"])' </dev/null >/dev/null 2>&1 &
	  echo $! >"$scratch/pid"; wait ) 2>/dev/null &
	holder=$!
	for _ in $(seq 50); do
		pid=$(cat "$scratch/pid" 2>/dev/null || true)
		[ -n "$pid" ] && [ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] && break
		sleep 0.1
	done
	mkdir "$scratch/dump"
	if "$CRIU" dump -t "$pid" -D "$scratch/dump" -o dump.log; then
		for f in "$scratch"/dump/*.img; do
			name=$(basename "$f" .img)
			kind=${name%-[0-9]*}
			[ "$kind" = pages ] && continue	# raw: one small seed below
			add_seed "$kind" "$f" dump
		done
	else
		echo "run.sh: criu dump failed; hand-made seeds only. Its log ends:" >&2
		tail -n 5 "$scratch/dump/dump.log" >&2 || true
	fi
	kill -9 "$pid" 2>/dev/null || true	# criu killed it, unless the dump failed
	wait "$holder" || true
else
	echo "run.sh: no usable $CRIU (or not root): hand-made seeds only" >&2
fi

# 2. Hand-made images of every kind.
for j in test/fuzz/seeds/*.json; do
	kind=$(basename "$j" .json)
	if "$PYTHON" contrib/crit/crit.py encode -i "$j" -o "$scratch/$kind.img"; then
		add_seed "$kind" "$scratch/$kind.img" hand
	fi
done
head -c 4096 /dev/zero >"$scratch/pages.img"
add_seed pages "$scratch/pages.img" hand
echo "run.sh: $(ls "$SEEDS" | wc -l) seeds in $SEEDS"

# test/fuzz/corpus: the seeds, plus what the working corpus found beyond
# them in inputs of under 4 KiB (kept small: it is in git).
if [ "$update_corpus" = 1 ]; then
	rm -rf test/fuzz/corpus
	mkdir -p test/fuzz/corpus "$scratch/small"
	cp "$SEEDS"/* test/fuzz/corpus/
	find "$OUT/corpus" -type f -size -4k -exec cp {} "$scratch/small/" \;
	"$FUZZER" -merge=1 "$@" test/fuzz/corpus "$scratch/small" 2>&1 | grep MERGE-OUTER
	echo "run.sh: test/fuzz/corpus has $(ls test/fuzz/corpus | wc -l) inputs," \
	     "$(du -sk --apparent-size test/fuzz/corpus | cut -f1) KiB"
	exit 0
fi

dirs=("$OUT/corpus" "$SEEDS")
[ -d test/fuzz/corpus ] && dirs+=(test/fuzz/corpus)
rc=0
"$FUZZER" -max_total_time="$time" -print_final_stats=1 -use_value_profile=1 \
	-max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$OUT/crashes/" "$@" "${dirs[@]}" || rc=$?
if [ "$rc" != 0 ]; then
	echo "run.sh: the fuzzer failed ($rc); inputs in $OUT/crashes/:" >&2
	ls -t "$OUT/crashes" | head -n 5 >&2
	exit 1
fi
