#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prints a directory holding protobuf-c/protobuf-c.c and protobuf-c.h of
# Debian's source package protobuf-c, at the version of the installed
# libprotobuf-c-dev (so the header the generated code was written for is
# the one compiled), for test/fuzz/build.sh to compile into the fuzz
# targets with coverage: the decoder is most of what an image read runs.
#
# Fetched once with apt's own client and verification (a private deb-src
# list made from the system's deb lines, private package lists, nothing
# in /etc/apt touched), unpacked with dpkg-source, and kept in
# $CRIU_FUZZ_CACHE (default ~/.cache/criu-fuzz). Exit 1, saying why, when it
# can't be had; build.sh then links the system library instead.

set -o errexit -o nounset -o pipefail

CACHE=${CRIU_FUZZ_CACHE:-$HOME/.cache/criu-fuzz}
say() { echo "protobuf-c-src: $*" >&2; }

ver=$(dpkg-query -W -f='${source:Version}' libprotobuf-c-dev 2>/dev/null) ||
	{ say "libprotobuf-c-dev is not installed"; exit 1; }
dir=$CACHE/protobuf-c-$ver
if [ -f "$dir/protobuf-c/protobuf-c.c" ]; then
	echo "$dir"
	exit 0
fi
command -v dpkg-source >/dev/null || { say "no dpkg-source (apt-get install dpkg-dev)"; exit 1; }

mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/parts"
# deb-src twins of the system's deb sources, in both formats apt reads
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ ! -f "$f" ] || sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
done >"$tmp/src.list"
for f in /etc/apt/sources.list.d/*.sources; do
	[ ! -f "$f" ] || sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
done
apt_o=(-o "Dir::Etc::SourceList=$tmp/src.list" -o "Dir::Etc::SourceParts=$tmp/parts"
       -o "Dir::State::Lists=$tmp/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
if ! apt-get "${apt_o[@]}" update >"$tmp/apt.log" 2>&1 ||
   ! (cd "$tmp" && apt-get "${apt_o[@]}" source --download-only "protobuf-c=$ver") \
	>>"$tmp/apt.log" 2>&1; then
	say "can't fetch the source package protobuf-c $ver:"
	tail -n 5 "$tmp/apt.log" >&2
	exit 1
fi
# apt checked the .dsc against the signed Sources; dpkg-source checks the
# tarballs against the .dsc
(cd "$tmp" && dpkg-source -x ./protobuf-c_*.dsc src) >>"$tmp/apt.log" 2>&1 ||
	{ say "dpkg-source -x failed:"; tail -n 5 "$tmp/apt.log" >&2; exit 1; }
[ -f "$tmp/src/protobuf-c/protobuf-c.c" ] ||
	{ say "the source package has no protobuf-c/protobuf-c.c"; exit 1; }
rm -rf "$dir"
mv "$tmp/src" "$dir"
say "protobuf-c $ver (Debian source package) in $dir"
echo "$dir"
