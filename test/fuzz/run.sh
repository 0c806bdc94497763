#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fuzzes criu's readers of untrusted text and bytes, one libFuzzer target
# after the other, the time split between them:
#   fuzz_image  the image files (criu/image and protobuf-c's decoder)  3/8
#   fuzz_proc   the /proc parsers (criu/proc)                          2/8
#   fuzz_rpc    the RPC requests (criu/rpc and protobuf-c's decoder)   2/8
#   fuzz_opts   the command line (criu/main.c)                         1/8
#   fuzz_pagesrv what a page server's peer sends (criu/image/psrecv.c)  1/8
#
#   test/fuzz/run.sh [SECONDS] [libFuzzer options...]   (default $FUZZ_TIME, or
#                                                        60 s in all)
#   test/fuzz/run.sh --update-corpus                     remake test/fuzz/corpus*
#                     (the fewest of the seeds, the old corpus and the
#                     working corpus' inputs under 4 KiB that cover what
#                     they all cover; test/fuzz/corpus-rpc is hand-made and
#                     left alone)
# FUZZ_TARGETS="fuzz_proc ..." picks targets (the time is split among them).
#
# Builds build/test/fuzz/fuzz_* when missing or older than their sources
# (test/fuzz/build.sh), makes seeds, replays test/fuzz/regress/KIND/ (inputs
# that once found a bug: each must run clean), then runs each target on a
# working corpus kept in build/test/fuzz/corpus-TARGET (it grows from run to
# run), with the seeds, test/fuzz/corpus[-KIND] and the dictionary
# test/fuzz/KIND.dict. One line per target says what it reached:
#   run.sh: fuzz_proc: 20 s, 270 of 854 PCs covered, 25976 execs/s, ...
#
# Seeds. fuzz_image (an input is one byte naming the image type, in the
# order of enum img_type, then the image file):
#   - the images of a real dump of a sleeping session leader, when
#     build/criu/criu works here (it needs root);
#   - test/fuzz/seeds/*.json, hand-made images of every kind, encoded by
#     contrib/crit/crit.py.
# fuzz_proc (one byte naming the parser, in fuzz_proc.c's order, then the
# file): this machine's own /proc files of a sleeping process, and
# test/fuzz/seeds/proc/ (hand-made: timers, pagemaps, nested namespaces...).
# fuzz_opts (the arguments, NUL-separated): test/fuzz/seeds/opts/.
# fuzz_rpc (a request as a client sends it): test/fuzz/corpus-rpc only.
# fuzz_pagesrv (the bytes a peer sends): test/fuzz/corpus-pagesrv only.
#
# A crash leaves its input in build/test/fuzz/crashes/ and the exit status 1;
# replay it with: build/test/fuzz/fuzz_TARGET build/test/fuzz/crashes/crash-...
# Once fixed, add it to test/fuzz/regress/KIND/ with a name that says what.

set -o errexit -o nounset -o pipefail

cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=$BUILD_DIR/test/fuzz
CRIU=${CRIU:-$BUILD_DIR/criu/criu}
PYTHON=${PYTHON:-python3}
read -r -a targets <<<"${FUZZ_TARGETS:-fuzz_image fuzz_proc fuzz_rpc fuzz_opts fuzz_pagesrv}"

update_corpus=0
time=${FUZZ_TIME:-60}
if [ "${1:-}" = "--update-corpus" ]; then
	update_corpus=1
	shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
	time=$1
	shift
fi

kind() { echo "${1#fuzz_}"; }
weight() { case "$1" in fuzz_image) echo 3 ;; fuzz_proc|fuzz_rpc) echo 2 ;; *) echo 1 ;; esac; }
# the checked-in corpus of a target (fuzz_image's predates the others)
corpus_of() { [ "$1" = fuzz_image ] && echo test/fuzz/corpus || echo "test/fuzz/corpus-$(kind "$1")"; }

# Build when needed.
stale=()
for t in "${targets[@]}"; do
	if [ ! -x "$OUT/$t" ] || [ -n "$(find test/fuzz/*.c test/fuzz/build.sh criu/image \
			criu/core criu/proc criu/rpc criu/main.c images -newer "$OUT/$t" -type f \
			2>/dev/null | head -n 1)" ]; then
		stale+=("$t")
	fi
done
[ ${#stale[@]} = 0 ] || test/fuzz/build.sh "${stale[@]}"

scratch=$(mktemp -d /tmp/criu-fuzz-seeds.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$OUT/crashes"

# seed DIR INDEX FILE NAME: FILE, prefixed by the byte INDEX, as DIR/NAME
seed() { { printf "\\x$(printf %02x "$2")"; cat "$3"; } >"$1/$4"; }

# ---- fuzz_image seeds ----
image_seeds()
{
	local dir=$1 i f name kind j types

	# the image types by number (enum img_type), from the registry
	# (images/kinds.def): their names (hand-made seeds are named so) and
	# their files ("fdinfo-%d.img": the dump's fdinfo-7.img)
	local nr name file files
	types=()
	files=()
	while read -r nr name file; do
		types[nr]=$name
		files[nr]=$file
	done < <(sed -nE 's/^(IMAGE|KIND|RAW)\(([^,]*),[^,]*, *([0-9]+), *"([^"]*)".*/\3 \2 \4/p' \
		 images/kinds.def)
	# add KIND FILE ORIGIN
	add() {
		for i in "${!types[@]}"; do
			if [ "${types[$i]}" = "$1" ]; then
				seed "$dir" "$i" "$2" "$3-$(basename "$2")"
				return 0
			fi
		done
		echo "run.sh: no image type '$1' in images/kinds.def; $2 not used" >&2
	}
	# add_file FILE ORIGIN: the type its name says
	add_file() {
		local base
		base=$(basename "$1")
		for i in "${!files[@]}"; do
			# shellcheck disable=SC2254
			case "$base" in
			"${files[$i]}"|${files[$i]/\%d/[0-9]*})
				seed "$dir" "$i" "$1" "$2-$base"
				return 0 ;;
			esac
		done
		echo "run.sh: no image file like $base in images/kinds.def; not used" >&2
	}

	# 1. A real dump.
	if [ -x "$CRIU" ] && [ "$(id -u)" = 0 ] && start_sleeper; then
		mkdir "$scratch/dump"
		if "$CRIU" dump -t "$pid" -D "$scratch/dump" -o dump.log; then
			for f in "$scratch"/dump/*.img; do
				case "$(basename "$f")" in
				pages-*) continue ;;	# raw: one small seed below
				esac
				add_file "$f" dump
			done
		else
			echo "run.sh: criu dump failed; hand-made seeds only. Its log ends:" >&2
			tail -n 5 "$scratch/dump/dump.log" >&2 || true
		fi
		stop_sleeper
	else
		echo "run.sh: no usable $CRIU (or not root): hand-made image seeds only" >&2
	fi

	# 2. Hand-made images of every kind.
	for j in test/fuzz/seeds/*.json; do
		# the kind is the seed's "image" (a kind may have several seeds)
		kind=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["image"])' "$j")
		name=$(basename "$j" .json)
		if "$PYTHON" contrib/crit/crit.py encode -i "$j" -o "$scratch/$name.img"; then
			add "$kind" "$scratch/$name.img" hand
		fi
	done
	head -c 4096 /dev/zero >"$scratch/pages.img"
	add pages "$scratch/pages.img" hand
}

# A session leader with nothing but /dev/null open (criu does not dump
# pipes, and this shell may hold some), in $pid. It runs under a subshell
# that reaps it, so that its death by criu's SIGKILL is no job notice here.
start_sleeper()
{
	rm -f "$scratch/pid"
	( "$PYTHON" -c 'import os; os.closerange(3, 1 << 16); os.setsid();
os.execvp("sleep", ["sleep", "1000"])' </dev/null >/dev/null 2>&1 &
	  echo $! >"$scratch/pid"; wait ) 2>/dev/null &
	holder=$!
	for _ in $(seq 50); do
		pid=$(cat "$scratch/pid" 2>/dev/null || true)
		[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] && return 0
		sleep 0.1
	done
	return 1
}

stop_sleeper()
{
	kill -9 "$pid" 2>/dev/null || true	# criu killed it, unless the dump failed
	wait "$holder" || true
}

# ---- fuzz_proc seeds: the parsers' own files, in fuzz_proc.c's order ----
proc_seeds()
{
	local dir=$1 f i=0

	start_sleeper || { echo "run.sh: no process to read /proc of" >&2; return 0; }
	for f in maps status stat limits fdinfo/0 timers timens_offsets \
		 "task/$pid/children" ns/pid; do
		case "$f" in
		ns/*) readlink "/proc/$pid/$f" >"$scratch/proc" || true ;;
		*) cat "/proc/$pid/$f" >"$scratch/proc" 2>/dev/null || true ;;
		esac
		[ -s "$scratch/proc" ] && seed "$dir" "$i" "$scratch/proc" "live-${f//\//-}"
		i=$((i + 1))
	done
	cat "/proc/$pid/smaps" >"$scratch/proc"
	seed "$dir" 0 "$scratch/proc" live-smaps
	stop_sleeper
}

# ---- run ----
total_weight=0
for t in "${targets[@]}"; do
	total_weight=$((total_weight + $(weight "$t")))
done

rc=0
for t in "${targets[@]}"; do
	k=$(kind "$t")
	seeds=$OUT/seeds-$k
	rm -rf "$seeds"
	mkdir -p "$seeds" "$OUT/corpus-$t"
	case "$t" in
	fuzz_image) image_seeds "$seeds" ;;
	fuzz_proc) proc_seeds "$seeds" ;;
	esac
	[ ! -d "test/fuzz/seeds/$k" ] || cp "test/fuzz/seeds/$k"/* "$seeds/"
	opts=()
	[ -f "test/fuzz/$k.dict" ] && opts+=(-dict="test/fuzz/$k.dict")
	# the parser's error messages are its job, not news
	[ "$t" = fuzz_opts ] && opts+=(-close_fd_mask=3)
	corpus=$(corpus_of "$t")

	if [ "$update_corpus" = 1 ]; then
		if [ "$t" = fuzz_rpc ] || [ "$t" = fuzz_pagesrv ]; then
			echo "run.sh: $corpus is hand-made (meson test replays it): left as it is"
			continue
		fi
		mkdir -p "$scratch/small-$k"
		[ ! -d "$corpus" ] || cp "$corpus"/* "$scratch/small-$k/"
		rm -rf "$corpus"
		mkdir -p "$corpus"
		find "$OUT/corpus-$t" -type f -size -4k -exec cp {} "$scratch/small-$k/" \;
		# the fewest inputs that cover what all of them cover: it is in git
		"$OUT/$t" -set_cover_merge=1 "${opts[@]}" "$@" "$corpus" "$seeds" \
			"$scratch/small-$k" 2>&1 |
			grep MERGE-OUTER || true
		echo "run.sh: $corpus has $(ls "$corpus" | wc -l) inputs," \
		     "$(du -sk --apparent-size "$corpus" | cut -f1) KiB"
		continue
	fi

	# inputs that once found a bug must run clean
	if [ -d "test/fuzz/regress/$k" ]; then
		if ! "$OUT/$t" "${opts[@]}" test/fuzz/regress/"$k"/* >"$scratch/regress.log" 2>&1; then
			grep -E 'ERROR|SUMMARY|runtime error|Running:' "$scratch/regress.log" >&2 || true
			echo "run.sh: $t: a bug of test/fuzz/regress/$k is back" >&2
			rc=1
			continue
		fi
		echo "run.sh: $t: $(ls "test/fuzz/regress/$k" | wc -l) regression inputs run clean"
	fi

	secs=$((time * $(weight "$t") / total_weight))
	[ "$secs" -gt 0 ] || secs=1
	dirs=("$OUT/corpus-$t" "$seeds")
	[ -d "$corpus" ] && dirs+=("$corpus")
	log=$scratch/$t.log
	trc=0
	"$OUT/$t" -max_total_time="$secs" -print_final_stats=1 -use_value_profile=1 \
		-max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$OUT/crashes/" "${opts[@]}" "$@" "${dirs[@]}" >"$log" 2>&1 || trc=$?
	# libFuzzer's own lines, for whoever reads the whole output
	grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" || true
	pcs=$(sed -n 's/.*Loaded 1 PC tables (\([0-9]*\) PCs).*/\1/p' "$log" | head -n 1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	eps=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log")
	runs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log")
	corp=$(ls "$OUT/corpus-$t" | wc -l)
	echo "run.sh: $t: $secs s, ${cov:-?} of ${pcs:-?} PCs covered, ${eps:-?} execs/s," \
	     "${runs:-?} runs, corpus $corp"
	if [ "$trc" != 0 ]; then
		echo "run.sh: $t failed ($trc); inputs in $OUT/crashes/:" >&2
		ls -t "$OUT/crashes" | head -n 5 >&2
		rc=1
	fi
done
exit "$rc"
