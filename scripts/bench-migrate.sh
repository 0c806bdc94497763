#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Live migration's downtime (issue 16): a writer of SIZE MiB (32 MiB/s of
# random pages) moved over loopback by stop-and-copy and by
# contrib/migrate/criu_migrate.py's pre-dump rounds; see
# test/bench/migrate_bench.py. Reports; asserts nothing but that criu worked.
#
#   scripts/bench-migrate.sh [SIZES]     (MiB, comma-separated; default 256,1024; root)
#
# Environment: SKIP_BUILD=1, BUILD_DIR.

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_built predump_writer "$B/test/bench/predump_writer" "$B/criu/criu"
exec python3 test/bench/migrate_bench.py --build-dir "$BUILD_DIR" --sizes "${1:-256,1024}"
