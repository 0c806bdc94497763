#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A minimal root filesystem for ctr's containers (contrib/container):
#
#   contrib/container/mkrootfs.sh [-b BUILD_DIR] [OUTDIR]
#
# OUTDIR (default BUILD_DIR/contrib/container/rootfs) gets: a static
# busybox with its applets linked in /bin, /sbin, /usr/bin, /usr/sbin; the
# /etc files a container needs (passwd, group, hosts, nsswitch.conf, an
# empty resolv.conf); ctr at /sbin/ctr (the --init reaper); ctr-service at
# /usr/bin; every built zdtm test program at /zdtm/NAME; and the shared
# libraries all of those need, found by ldd and copied to the paths ldd
# names (the dynamic loader included).
#
# The test programs are the same dynamic binaries the other flavours run,
# copied with their libraries: an `ns` flavour that ran static variants
# would test other code and another memory layout (no ld.so, another TLS
# setup) than plain does, and would need a second build of every program.
#
# Cached: the tree is rebuilt only when this script or one of its inputs
# (size, mtime) changed since the last build, which the stamp file
# OUTDIR/.stamp records; concurrent builds wait on OUTDIR.lock.  Prints the
# rootfs path.  Environment: BUSYBOX (default /bin/busybox).

set -o errexit -o nounset -o pipefail

BUILD_DIR=build
while getopts b: opt; do
	case $opt in
	b) BUILD_DIR=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [OUTDIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
BUILD_DIR=$(realpath "$BUILD_DIR")
OUT=${1:-$BUILD_DIR/contrib/container/rootfs}
BUSYBOX=${BUSYBOX:-/bin/busybox}
CTR_BIN=$BUILD_DIR/contrib/container/ctr
SERVICE=$BUILD_DIR/contrib/container/ctr-service
ZDTM=$BUILD_DIR/test/zdtm/static

die()
{
	echo "mkrootfs: $*" >&2
	exit 1
}

[ -x "$BUSYBOX" ] || die "no busybox at $BUSYBOX (package busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is dynamic: a static one is needed (package busybox-static)"
fi
for f in "$CTR_BIN" "$SERVICE"; do
	[ -x "$f" ] || die "$f is not built (ninja -C $BUILD_DIR)"
done

# The zdtm programs: executable ELF files of the build's static/ directory.
programs()
{
	local f

	[ -d "$ZDTM" ] || return 0
	for f in "$ZDTM"/*; do
		if [ -f "$f" ] && [ -x "$f" ] && [ "$(head -c 4 "$f" | tr -d '\177')" = ELF ]; then
			echo "$f"
		fi
	done
}

stamp()
{
	{
		sha256sum "$0" | cut -d' ' -f1
		stat -L -c '%n %s %Y' "$BUSYBOX" "$CTR_BIN" "$SERVICE"
		programs | xargs -r stat -c '%n %s %Y'
	} | sha256sum | cut -d' ' -f1
}

# copy_elf FILE DEST: FILE to DEST in the tree, with its libraries.
copy_elf()
{
	local lib

	install -D -m 0755 "$1" "$NEW$2"
	# "name => /path (addr)" and the loader's "/path (addr)"
	ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		[ -e "$NEW$lib" ] || install -D -m 0755 "$(realpath "$lib")" "$NEW$lib"
	done
}

build()
{
	local applet d

	rm -rf "$NEW"
	mkdir -p "$NEW"
	for d in bin sbin usr/bin usr/sbin etc root proc sys dev run tmp var/tmp zdtm; do
		mkdir -p "$NEW/$d"
	done
	chmod 0700 "$NEW/root"
	chmod 1777 "$NEW/tmp" "$NEW/var/tmp"
	install -m 0755 "$BUSYBOX" "$NEW/bin/busybox"
	"$BUSYBOX" --list-full | while read -r applet; do
		[ -e "$NEW/$applet" ] || ln -s /bin/busybox "$NEW/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		>"$NEW/etc/passwd"
	printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' >"$NEW/etc/group"
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$NEW/etc/hosts"
	printf 'passwd: files\ngroup: files\nhosts: files\n' >"$NEW/etc/nsswitch.conf"
	: >"$NEW/etc/resolv.conf"
	copy_elf "$CTR_BIN" /sbin/ctr
	copy_elf "$SERVICE" /usr/bin/ctr-service
	programs | while read -r f; do
		copy_elf "$f" "/zdtm/$(basename "$f")"
	done
}

mkdir -p "$(dirname "$OUT")"
exec 9>"$OUT.lock"
flock 9
want=$(stamp)
if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$want" ]; then
	echo "$OUT"
	exit 0
fi
NEW=$OUT.new
build
echo "$want" >"$NEW/.stamp"
rm -rf "$OUT"
mv "$NEW" "$OUT"
echo "$OUT"
