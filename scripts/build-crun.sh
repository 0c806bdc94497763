#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# crun with checkpoint/restore, built from Debian's source package against
# our libcriu (test/zdtm/test_rpc_crun.py). Debian's binary crun package is
# built without CRIU support ("+CRIU" is missing from `crun --version`), so
# the real client is made here: the source of the crun version Debian
# offers (apt-cache madison), its tarball checked against the sha256 of the
# package's .dsc, configured against the libcriu of this build (installed
# under $B/crun/libcriu by `meson install --destdir`), which crun's
# configure finds by pkg-config (criu >= 3.15) and crun dlopen()s at run
# time as "libcriu.so.2".
#
#   scripts/build-crun.sh        -> $B/crun/crun (prints its path)
#
# The tarball is cached in ~/.cache/criu-crun; a crun already built from
# the same version and libcriu is kept. Environment: BUILD_DIR, SKIP_BUILD=1,
# DEBIAN_MIRROR (default http://deb.debian.org/debian). Needs the packages
# install-deps.sh installs for it (libyajl-dev, libseccomp-dev,
# libsystemd-dev, gperf, make, curl).

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_built build-crun "$CRIU"

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/criu-crun
OUT=$B/crun
LOG=$OUT/build.log

die()
{
	echo "build-crun: $*" >&2
	exit 1
}

mkdir -p "$CACHE" "$OUT"
version=$(apt-cache madison crun 2>/dev/null | awk -F'|' 'NR == 1 { gsub(/ /, "", $2); print $2 }')
[ -n "$version" ] || die "apt-cache knows no crun package"
# a .dsc names the upstream tarball and its sha256
dsc=$CACHE/crun_$version.dsc
if [ ! -s "$dsc" ]; then
	curl -fsS -o "$dsc.part" "$MIRROR/pool/main/c/crun/crun_${version/+/%2B}.dsc" ||
		die "can't fetch crun_$version.dsc from $MIRROR"
	mv "$dsc.part" "$dsc"
fi
read -r sum _ tarball < <(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" |
			 grep -E ' crun_[^ ]*\.orig\.tar\.(xz|gz)$')
[ -n "${tarball:-}" ] || die "crun_$version.dsc names no upstream tarball"
if [ ! -s "$CACHE/$tarball" ]; then
	curl -fsS -o "$CACHE/$tarball.part" "$MIRROR/pool/main/c/crun/$tarball" ||
		die "can't fetch $tarball from $MIRROR"
	mv "$CACHE/$tarball.part" "$CACHE/$tarball"
fi
echo "$sum  $CACHE/$tarball" | sha256sum --quiet -c - ||
	die "$tarball does not match the sha256 of crun_$version.dsc"

# our libcriu, as `meson install` puts it, in a directory of the build's
rm -rf "$OUT/libcriu"
meson install -C "$B" --destdir "$OUT/libcriu" --quiet >"$LOG" 2>&1 ||
	die "meson install of libcriu failed (log: $LOG)"
pc=$(find "$OUT/libcriu" -name criu.pc | head -n 1)
lib=$(find "$OUT/libcriu" -name libcriu.so.2 | head -n 1)
[ -n "$pc" ] && [ -n "$lib" ] || die "meson install put no criu.pc or libcriu.so.2 in $OUT/libcriu"
stamp="$version $(sha256sum <"$lib" | cut -d' ' -f1)"
if [ -x "$OUT/crun" ] && [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$OUT/crun"
	exit 0
fi

src=$OUT/src
rm -rf "$src" "$OUT/crun" "$OUT/stamp"
mkdir -p "$src"
tar -xf "$CACHE/$tarball" -C "$src" --strip-components=1
# crun writes <criu/criu.h>: the directory above the one pkg-config names
inc=$(dirname "$(find "$OUT/libcriu" -path '*/include/criu/criu.h' | head -n 1)")/..
(
	cd "$src"
	export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$OUT/libcriu
	./configure --disable-dependency-tracking CFLAGS="-O2 -I$inc"
	make -j"$(nproc)"
) >>"$LOG" 2>&1 || die "crun $version did not build (log: $LOG)"
grep -q '^checking for CRIU... yes' "$LOG" ||
	die "crun's configure did not find our libcriu (log: $LOG)"
"$src/crun" --version | grep -q '+CRIU' || die "crun $version was built without CRIU"
cp "$src/crun" "$OUT/crun"
echo "$stamp" >"$OUT/stamp"
echo "$OUT/crun"
