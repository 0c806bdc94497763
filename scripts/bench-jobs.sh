#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Dump and restore GiB/s by --jobs (1, 2, and more where the machine has the
# CPUs) at 256 MiB and 1 GiB, beside the tmpfs write rate of the same run.
#
#   scripts/bench-jobs.sh [jobs_bench.py options...]
#
# Builds (SKIP_BUILD=1 skips it) and runs test/bench/jobs_bench.py. The
# figures are a report: the exit status says only whether criu worked.

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_built bench
exec python3 test/bench/jobs_bench.py --build-dir "$BUILD_DIR" "$@"
