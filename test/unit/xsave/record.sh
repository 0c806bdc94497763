#!/bin/bash
# Records the XSAVE layouts of test_xsave.c: probe.c run in a QEMU guest
# (TCG) of each -cpu model given (default: the list below), and on this
# host with --host. Writes NAME.layout here. The guests boot the kernel of
# scripts/kernel-build.sh; about 10 s each.
#
# Usage: test/unit/xsave/record.sh [--host] [MODEL...]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -static -o "$work/xsave-probe" "$HERE/probe.c"
host=0
[ "${1:-}" = --host ] && { host=1; shift; }
models=("$@")
[ ${#models[@]} -gt 0 ] || [ $host = 1 ] ||
	models=(max Haswell Skylake-Server Icelake-Server EPYC EPYC-Rome EPYC-Milan
		Denverton SandyBridge)

header() {
	echo "# $1"
	echo "# recorded by test/unit/xsave/record.sh (probe.c), Linux $2"
}
if [ $host = 1 ]; then
	{ header "this host's CPU" "$(uname -r)"; "$work/xsave-probe"; } > "$work/out"
	name=host-$(grep '^brand' "$work/out" | cut -d' ' -f2- | tr -c 'A-Za-z0-9\n' - |
		tr -s - | sed 's/-$//')
	mv "$work/out" "$HERE/$name.layout"
	echo "$name.layout"
fi
for m in ${models[@]+"${models[@]}"}; do
	out=$("$ROOT/scripts/kernel-boot.sh" --cpu "$m" --smp 1 --timeout 120 \
		--add "$work/xsave-probe" -- 'uname -r; xsave-probe')
	{ header "QEMU -cpu $m (TCG)" "$(head -1 <<<"$out")"; tail -n +2 <<<"$out"; } \
		> "$HERE/qemu-$m.layout"
	echo "qemu-$m.layout"
done
