#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmark criu dump/restore against memcpy and a tmpfs write.
#
#   scripts/bench.sh [--quick] [bench.py options...]
#
# Builds (SKIP_BUILD=1 skips it) and runs test/bench/bench.py, which prints
# the figures; see `test/bench/bench.py --help`.  Images go to /dev/shm.
# --quick: 3 measured rounds per size instead of 5 (for CI).
# The figures are a report: the exit status says only whether criu worked.

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

args=()
for a in "$@"; do
	case "$a" in
	--quick) args+=(--runs 3) ;;
	*) args+=("$a") ;;
	esac
done

need_built bench
exec python3 test/bench/bench.py --build-dir "$BUILD_DIR" "${args[@]}"
