#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lazy restore: the time until a restored tree runs, full vs --lazy-pages
# (test/bench/lazy_bench.py). Usage: scripts/bench-lazy.sh [MiB...] (root)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

exec /usr/bin/python3 test/bench/lazy_bench.py --build-dir "$BUILD_DIR" "${@:-256}"
