#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install everything this project needs on Debian 12, from Debian's packages.
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --kernel   also the packages for the kernel work
#
# Idempotent: when every package is already installed nothing is fetched and
# the script returns at once.  The package index is refreshed at most once in
# APT_MAX_AGE seconds (default 6 hours).  Runs as root (no sudo needed); when
# not root it uses sudo if there is one.

set -o errexit -o nounset -o pipefail

# Packages needed to build criu and its helpers.
BUILD_PKGS=(
	gcc
	meson
	ninja-build
	pkg-config
	protobuf-c-compiler
	libprotobuf-c-dev
	libcap-dev
	libnl-3-dev		# network namespaces: rtnetlink (criu/parts/ns-net*.c)
	libnl-route-3-dev
	libgnutls28-dev		# --tls: the page server's helper criu-tls (criu/tls/)
	libnet1-dev		# the FIN of a half-closed TCP connection (parts/file-inet-tcp.c)
	clang			# the libFuzzer target (test/fuzz)
	libclang-rt-14-dev	# libFuzzer and sanitizer runtimes for clang 14
)

# Packages needed to run the tests and the benchmark.
TEST_PKGS=(
	python3
	python3-pytest
	python3-protobuf
	mypy			# the types of the Python (mypy.ini), scripts/test.sh
	procps			# ps, pgrep for the scripts
	util-linux		# setsid
	runc			# a real RPC client: test/zdtm/test_rpc_runc.py
	podman			# another (with runc): test/zdtm/test_rpc_podman.py
	conmon			# podman's container monitor
	busybox-static		# the root filesystem of that test's container
	curl			# crun's source (scripts/build-crun.sh): Debian's crun has no CRIU
	make			# crun's build
	gperf			# crun's build dependencies, as its source package names them
	libyajl-dev
	libseccomp-dev
	libsystemd-dev
	nftables		# nft: network namespaces' rulesets (criu dump/restore run it)
	iptables		# --network-lock iptables (iptables-legacy-restore)
	iproute2		# ip: the network tests set namespaces up with it
	openssl			# test_pagesrv_tls.py: a CA and certificates made at test time
)

# ---------------------------------------------------------------------------
# KERNEL PACKAGES (installed only with --kernel).
# Owned by the kernel work: extend this list there, keep one package a line.
KERNEL_PKGS=(
	qemu-system-x86
	busybox-static
	linux-source-6.1
	build-essential
	bc
	bison
	flex
	libelf-dev
	libssl-dev
	cpio
	xz-utils
	rsync
)
# END OF KERNEL PACKAGES
# ---------------------------------------------------------------------------

APT_MAX_AGE=${APT_MAX_AGE:-21600}
LOG=${TMPDIR:-/tmp}/criu-install-deps.log

die()
{
	echo "install-deps: error: $*" >&2
	exit 1
}

usage()
{
	sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'
}

want_kernel=0
for arg in "$@"; do
	case "$arg" in
	--kernel) want_kernel=1 ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown argument '$arg' (try --help)" ;;
	esac
done

[ -r /etc/debian_version ] && command -v dpkg-query >/dev/null &&
	command -v apt-get >/dev/null ||
	die "this script needs a Debian system (apt-get, dpkg-query)"

SUDO=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null ||
		die "run as root (no sudo found to become root)"
	SUDO=(sudo)
fi

pkgs=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}")
[ "$want_kernel" = 1 ] && pkgs+=("${KERNEL_PKGS[@]}")

# A package counts only when fully installed ("unpacked" or "half-configured"
# leftovers of an interrupted install are handed back to apt-get).
missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${status:0:2}" = "ii" ] || missing+=("$p")
done

if [ "${#missing[@]}" = 0 ]; then
	echo "install-deps: all ${#pkgs[@]} packages present"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"

export DEBIAN_FRONTEND=noninteractive
# Another apt may be running (another developer's install): wait for its lock
# rather than failing at once.
APT_OPTS=(-q -y -o DPkg::Lock::Timeout=1200 -o Dpkg::Use-Pty=0)

# Refresh the index when it was never fetched or is older than APT_MAX_AGE.
newest=0
for f in /var/lib/apt/lists/*_InRelease /var/lib/apt/lists/*_Release; do
	[ -e "$f" ] || continue
	t=$(stat -c %Y "$f")
	[ "$t" -gt "$newest" ] && newest=$t
done
: >"$LOG"
if [ $(( $(date +%s) - newest )) -gt "$APT_MAX_AGE" ]; then
	echo "install-deps: apt-get update"
	"${SUDO[@]}" apt-get "${APT_OPTS[@]}" update >>"$LOG" 2>&1 || {
		tail -n 20 "$LOG" >&2
		die "apt-get update failed (full log: $LOG)"
	}
fi

if ! "${SUDO[@]}" apt-get "${APT_OPTS[@]}" install --no-install-recommends \
		"${missing[@]}" >>"$LOG" 2>&1; then
	tail -n 20 "$LOG" >&2
	die "apt-get install failed for: ${missing[*]} (full log: $LOG)"
fi

# Verify: apt-get may have returned 0 while a package is still not configured.
for p in "${missing[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${status:0:2}" = "ii" ] ||
		die "package $p is still not installed (status '${status}'; log: $LOG)"
done
echo "install-deps: done"
