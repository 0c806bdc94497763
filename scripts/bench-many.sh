#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Many containers at once (issue 17): N ctr containers dumped all at once
# and restored all at once, one criu each, beside ctr's own start of the N
# (the floor: making N sets of namespaces) and one container alone. See
# test/bench/many_bench.py. Reports; asserts nothing but that criu worked.
#
#   scripts/bench-many.sh [N]        (default 50; root)
#
# Environment: SKIP_BUILD=1, BUILD_DIR.

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_built ctr "$B/contrib/container/ctr"
exec python3 test/bench/many_bench.py --build-dir "$BUILD_DIR" -n "${1:-50}"
