#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the libFuzzer targets with clang, into $BUILD_DIR/test/fuzz/:
#   fuzz_image   the image layer (criu/image, criu/core) and the protobuf-c
#                code of images/*.proto, generated into $BUILD_DIR/test/fuzz/gen
#                by protoc-c (as meson does, but independent of how meson lays
#                out its build directory), with protobuf-c's own decoder
#                compiled in from Debian's source package (protobuf-c-src.sh)
#                so that coverage sees it; without that source, linked
#                against the system's libprotobuf-c, uninstrumented (said)
#   fuzz_proc    the /proc parsers (criu/proc)
#   fuzz_opts    the command line parser (criu/main.c)
#   fuzz_rpc     the RPC request decoder and option table (criu/rpc), with
#                protobuf-c's decoder like fuzz_image
#   fuzz_pagesrv the page server's receiver (criu/image/psrecv.c)
# meson builds everything else with one compiler; these need clang's
# -fsanitize=fuzzer, so they are compiled here, straight from the sources.
#   test/fuzz/build.sh [TARGET...]      (default: all five)
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

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_image fuzz_proc fuzz_opts fuzz_rpc fuzz_pagesrv)

# -O1 and no frame pointer omission: the usual fuzzing trade of speed for
# stack traces. UBSan aborts on the first finding so that libFuzzer stops.
cflags=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -DCRIU_VERSION='"fuzz"'
	-Wall -Wno-unused-parameter -fno-sanitize-recover=undefined)

# protobuf-c's decoder, instrumented like the rest, when its source is at
# hand. Three findings of UBSan in it are known upstream and not ours to
# fix (protobuf-c 1.4.1; issues 506 and 792, pull requests 794 and 808: a
# shift into the sign bit of a field number's top byte, memcpy from NULL for
# 0 bytes, NULL + 0 for an empty packed field); those checks are off in that
# file, every other check is on.
pbc=()
pbc_dir=
if [[ " ${targets[*]} " = *" fuzz_image "* || " ${targets[*]} " = *" fuzz_rpc "* ]]; then
	if pbc_dir=$(test/fuzz/protobuf-c-src.sh); then
		# shellcheck disable=SC2086
		"$CC" "${cflags[@]}" -fsanitize=fuzzer-no-link,address,undefined \
			-fno-sanitize=shift-base,nonnull-attribute,pointer-overflow -I"$pbc_dir" $FUZZ_CFLAGS \
			-c "$pbc_dir/protobuf-c/protobuf-c.c" -o "$OUT/protobuf-c.o"
		pbc=("$OUT/protobuf-c.o")
		echo "$pbc_dir/protobuf-c/protobuf-c.c" >"$OUT/protobuf-c.src"
	else
		echo "build.sh: warning: protobuf-c's decoder is linked, not compiled in:" \
		     "fuzz_image's and fuzz_rpc's coverage does not see it" >&2
		pbc=(-lprotobuf-c)
		rm -f "$OUT/protobuf-c.src"
	fi
fi

# what every target stands on: logging, files, helpers
core=(criu/core/file.c criu/core/log.c criu/core/util.c)

# build NAME SOURCES...
build()
{
	local name=$1

	shift
	# shellcheck disable=SC2086
	"$CC" "${cflags[@]}" -fsanitize=fuzzer,address,undefined \
		-Icriu -Iimages -I"$GEN" ${pbc_dir:+-I"$pbc_dir"} "$@" $FUZZ_CFLAGS -o "$OUT/$name.tmp"
	mv "$OUT/$name.tmp" "$OUT/$name"
	echo "build.sh: $OUT/$name"
}

for t in "${targets[@]}"; do
	case "$t" in
	fuzz_image)
		# the image layer and what it stands on; nothing above it
		build fuzz_image test/fuzz/fuzz_image.c criu/image/*.c "${core[@]}" "$GEN"/*.pb-c.c \
			"${pbc[@]}" ;;
	fuzz_proc)
		build fuzz_proc test/fuzz/fuzz_proc.c criu/proc/*.c "${core[@]}" ;;
	fuzz_opts)
		build fuzz_opts test/fuzz/fuzz_opts.c criu/core/external.c criu/core/cgroupfs.c criu/core/lsm.c "${core[@]}" ;;
	fuzz_rpc)
		build fuzz_rpc test/fuzz/fuzz_rpc.c criu/rpc/decode.c criu/rpc/options.c \
			criu/core/external.c criu/core/cgroupfs.c criu/core/lsm.c "${core[@]}" \
			"$GEN"/rpc.pb-c.c "${pbc[@]}" ;;
	fuzz_pagesrv)
		build fuzz_pagesrv test/fuzz/fuzz_pagesrv.c criu/image/imgout.c criu/image/psrecv.c \
			criu/image/tls.c \
			"${core[@]}" ;;
	*)
		echo "build.sh: no fuzz target $t" >&2
		exit 1 ;;
	esac
done
