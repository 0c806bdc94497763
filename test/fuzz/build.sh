#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the libFuzzer target of the image reader with clang:
#   test/fuzz/build.sh            -> $BUILD_DIR/test/fuzz/fuzz_image
# meson builds everything else with one compiler; this target needs clang's
# -fsanitize=fuzzer, so it is compiled here, straight from the sources: the
# image layer (criu/image, criu/core) and the protobuf-c code of images/*.proto,
# generated into $BUILD_DIR/test/fuzz/gen by protoc-c (as meson does, but
# independent of how meson lays out its build directory).
#
# Environment: BUILD_DIR (default build), CC (default clang), FUZZ_CFLAGS
# (added last, e.g. "-O2" or "-fsanitize=memory" instead of address).

set -o errexit -o nounset -o pipefail

cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-clang}
OUT=$BUILD_DIR/test/fuzz
GEN=$OUT/gen
FUZZ_CFLAGS=${FUZZ_CFLAGS:-}

command -v "$CC" >/dev/null || { echo "build.sh: no $CC (apt-get install clang)" >&2; exit 1; }
command -v protoc-c >/dev/null || { echo "build.sh: no protoc-c" >&2; exit 1; }
mkdir -p "$GEN"

# Regenerate the protobuf-c code when a .proto is newer than it (or is new).
regen=0
for p in images/*.proto; do
	c=$GEN/$(basename "$p" .proto).pb-c.c
	[ "$c" -nt "$p" ] || regen=1
done
if [ "$regen" = 1 ]; then
	rm -f "$GEN"/*.pb-c.[ch]
	protoc-c --proto_path=images --c_out="$GEN" images/*.proto
fi

# The image layer and what it stands on; nothing above it.
srcs=(test/fuzz/fuzz_image.c criu/image/*.c criu/core/file.c criu/core/log.c criu/core/util.c
      "$GEN"/*.pb-c.c)

# -O1 and no frame pointer omission: the usual fuzzing trade of speed for
# stack traces. UBSan aborts on the first finding so that libFuzzer stops.
# shellcheck disable=SC2086
"$CC" -g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE \
	-DCRIU_VERSION='"fuzz"' -Wall -Wno-unused-parameter \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Icriu -Iimages -I"$GEN" \
	"${srcs[@]}" -lprotobuf-c $FUZZ_CFLAGS -o "$OUT/fuzz_image.tmp"
mv "$OUT/fuzz_image.tmp" "$OUT/fuzz_image"
echo "build.sh: $OUT/fuzz_image"
