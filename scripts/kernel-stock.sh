#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Debian's stock 6.1 cloud kernel, the "other build" of
# test/kernel/test_two_kernels.py (a vDSO and a [vvar] unlike the patched
# kernel's): the package linux-image-cloud-amd64 depends on, downloaded
# with apt-get download (the -unsigned one where Debian has it: the same
# kernel without the signature) and unpacked with dpkg -x into
# $CRIU_KERNEL_CACHE/stock/x (default ~/.cache/criu-kernel). Nothing is
# installed. Prints the vmlinuz path; exit 1 with a line saying why not.

set -o errexit -o nounset -o pipefail

CACHE=${CRIU_KERNEL_CACHE:-$HOME/.cache/criu-kernel}
STOCK=$CACHE/stock

die()
{
	echo "kernel-stock: $*" >&2
	exit 1
}

found()
{
	ls "$STOCK"/x/boot/vmlinuz-6.1* 2>/dev/null | tail -n 1
}

if [ -n "$(found)" ]; then
	found
	exit 0
fi
pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
      awk '/Depends: linux-image-6\.1/ { print $2; exit }')
[ -n "$pkg" ] || die "apt-cache knows no linux-image-cloud-amd64 of 6.1"
mkdir -p "$STOCK"
tmp=$(mktemp -d "$STOCK/dl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && { apt-get download -q "$pkg-unsigned" || apt-get download -q "$pkg"; }) \
	>"$tmp/log" 2>&1 || die "apt-get download $pkg failed: $(tail -n 1 "$tmp/log")"
rm -rf "$STOCK/x"
dpkg -x "$tmp"/*.deb "$STOCK/x" || die "dpkg -x of $(basename "$tmp"/*.deb) failed"
[ -n "$(found)" ] || die "$pkg holds no boot/vmlinuz-6.1*"
found
