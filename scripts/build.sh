#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Configure (first time) or reconfigure, then build everything into build/.
#   scripts/build.sh [extra meson options...]
# BUILD_DIR overrides the build directory (default: build).

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -f "$BUILD_DIR/build.ninja" ]; then
	if [ "$#" -gt 0 ]; then
		meson configure "$BUILD_DIR" "$@"
	fi
	# ninja re-runs meson by itself when a meson.build changed.
else
	wipe=()
	# A directory left by an interrupted setup: start it over.
	[ -d "$BUILD_DIR/meson-private" ] && wipe=(--wipe)
	setup_log=$(mktemp /tmp/criu-meson-setup.XXXXXX)
	if ! meson setup "${wipe[@]}" "$BUILD_DIR" "$@" \
			>"$setup_log" 2>&1; then
		tail -n 25 "$setup_log" >&2
		echo "build: meson setup failed (full output: $setup_log)" >&2
		exit 1
	fi
	rm -f "$setup_log"
fi

if ! ninja -C "$BUILD_DIR" >"$BUILD_DIR/ninja.log" 2>&1; then
	grep -E -B2 -A8 'error|FAILED' "$BUILD_DIR/ninja.log" | head -n 60 >&2
	echo "build: ninja failed (full output: $BUILD_DIR/ninja.log)" >&2
	exit 1
fi
echo "build: ok ($BUILD_DIR)"
