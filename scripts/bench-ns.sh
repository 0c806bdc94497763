#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What making a container's namespaces costs on this machine: the floor
# under a restore of a container (issue 12 aims at a restore in 20 ms;
# crun is said to start a container in about 5 ms).
#
#   scripts/bench-ns.sh [RUNS]
#
# Runs build/contrib/container/bench-ns (see bench-ns.c) on a copy of the
# minimal rootfs (contrib/container/mkrootfs.sh), RUNS rounds (default
# 100), each round taking every measurement once: unshare() of each
# namespace kind and of a container's set, clone() with the container's
# flags, the OCI mounts with pivot_root (with and without the cgroup
# mounts), a whole container start by ctr's library and `ctr run`. Prints
# min, median and 90th percentile in microseconds. Then, as the reference
# measured in the same run, `runc run` of the same rootfs with runc spec's
# default config (RUNC_RUNS times, default 10; skipped without runc).
#
# Everything happens in namespaces of its own or is undone (ctr tears each
# container down); the script checks that no cgroup, link or mount of the
# host changed. Environment: SKIP_BUILD=1, BUILD_DIR, RUNC_RUNS, KEEP=1.

set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${1:-100}
RUNC_RUNS=${RUNC_RUNS:-10}
BENCH=$B/contrib/container/bench-ns

need_built bench-ns "$BENCH" "$SUBREAPER"

host_view()
{
	cat /proc/self/mountinfo | cut -d' ' -f4- | sort
	ls /sys/class/net
	find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'bench-ns*' 2>/dev/null || true
}

WORK=$(mktemp -d /tmp/bench-ns.XXXXXX)
cleanup()
{
	[ -n "${KEEP:-}" ] && { echo "bench-ns: kept $WORK"; return; }
	rm -rf "$WORK"
}
trap cleanup EXIT
chmod 0755 "$WORK"
ROOTFS=$(contrib/container/mkrootfs.sh -b "$B")
cp -a "$ROOTFS" "$WORK/rootfs"
before=$(host_view)

echo "== bench-ns: $RUNS rounds on $(nproc) CPUs, kernel $(uname -r)"
"$SUBREAPER" "$BENCH" "$WORK/rootfs" "$RUNS"

# The reference, in the same run: runc's default spec on the same rootfs.
if command -v runc >/dev/null && [ "$RUNC_RUNS" -gt 0 ]; then
	mkdir -p "$WORK/bundle" "$WORK/runc-state"
	(cd "$WORK/bundle" && runc spec)
	python3 - "$WORK/bundle/config.json" "$WORK/rootfs" <<'EOF'
import json, sys
p, root = sys.argv[1], sys.argv[2]
spec = json.load(open(p))
spec["root"] = {"path": root, "readonly": False}
spec["process"]["terminal"] = False
spec["process"]["args"] = ["/bin/true"]
json.dump(spec, open(p, "w"))
EOF
	times=()
	for i in $(seq "$RUNC_RUNS"); do
		t0=$(date +%s%N)
		runc --root "$WORK/runc-state" run --bundle "$WORK/bundle" "bench-ns-$$-$i" \
			</dev/null >/dev/null 2>"$WORK/runc.err" ||
			{ echo "bench-ns: runc run failed: $(tail -n 1 "$WORK/runc.err")" >&2; break; }
		t1=$(date +%s%N)
		times+=($(((t1 - t0) / 1000)))
	done
	if [ "${#times[@]}" -gt 0 ]; then
		printf '%s\n' "${times[@]}" | sort -n | awk -v n="${#times[@]}" '
			{ v[NR] = $1 }
			END {
				p = int(n * 9 / 10) + 1
				if (p > n)
					p = n
				printf "%-52s %5d %9.1f %9.1f %9.1f\n", \
				       "`runc run` of the same rootfs (reference)", n, v[1], v[int(n / 2) + 1], v[p]
			}'
	fi
else
	echo "(runc is not installed: no reference row)"
fi

after=$(host_view)
if [ "$before" != "$after" ]; then
	echo "bench-ns: FAIL: the host changed:" >&2
	diff <(echo "$before") <(echo "$after") >&2 || true
	exit 1
fi
echo "bench-ns: the host is as it was (mounts, links, cgroups)"
