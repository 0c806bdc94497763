#!/bin/bash
# Build the test kernel: Debian's linux-source-6.1 + kernel/patches/series,
# configured from tinyconfig + kernel/config.fragment, plus the selftests
# listed in kernel/selftests.list (built statically from the patched tree).
#
# Usage: scripts/kernel-build.sh [--print-dir] [--print-version]
#                                [--check-series [--source=TARBALL]]
#                                [--no-apply] [--force] [-q]
#
#   (no option)   install what is missing, build if needed; the last line on
#                 stdout is the image directory (bzImage, config, selftests/)
#   --print-dir   print the image directory of the current inputs and exit 0,
#                 or exit 1 if it is not built yet (nothing is installed)
#   --print-version  print the Debian version of linux-source-6.1 a build
#                 would use (why: on stderr) and exit
#   --check-series   check that kernel/patches/series applies, patch after
#                 patch, to that version (the cached source tree, or the
#                 installed tarball, or --source=TARBALL); exit 1 naming the
#                 first patch that does not, 3 when no source is at hand
#   --no-apply    build the source tree as it is (for developing patches in
#                 $CACHE/src/...; the result is NOT cached under the hash)
#   --force       discard local changes in the source tree when re-applying
#
# Environment:
#   CRIU_KERNEL_CACHE   cache directory (default ~/.cache/criu-kernel)
#   KERNEL_DEB_VERSION  Debian version of linux-source-6.1 (default: the pin
#                       while Debian serves it, else the installed one, else
#                       the newest served; the choice is logged)
#   KERNEL_JOBS         make -j value (default 2)
#
# Heavy work runs under nice -n 19: the machine is shared.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KDIR="$ROOT/kernel"
# The version kernel/patches/series was made on and tested with.
PIN_VERSION=6.1.192-2
CACHE=${CRIU_KERNEL_CACHE:-$HOME/.cache/criu-kernel}
JOBS=${KERNEL_JOBS:-2}
NICE="nice -n 19"
# Bump when the way the kernel is configured or built changes: it is part
# of the cache key, with the Debian version, the fragment and the series.
RECIPE=1
PKGS="build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils rsync
      qemu-system-x86 busybox-static git"

mode=build
apply=1
force=0
source_tar=
quiet=0
for a in "$@"; do
	case "$a" in
	--print-dir) mode=print ;;
	--print-version) mode=version ;;
	--check-series) mode=check ;;
	--source=*) source_tar=${a#--source=} ;;
	--no-apply) apply=0 ;;
	--force) force=1 ;;
	-q) quiet=1 ;;
	-h|--help) sed -n '2,30p' "$0"; exit 0 ;;
	*) echo "kernel-build: unknown option $a" >&2; exit 2 ;;
	esac
done

log() { [ "$quiet" = 1 ] || echo "kernel-build: $*" >&2; }
die() { echo "kernel-build: error: $*" >&2; exit 1; }

series_patches() {
	[ -f "$KDIR/patches/series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$KDIR/patches/series" | grep -v '^$' || true
}

# --- the Debian version ---------------------------------------------------------
# Debian replaces linux-source-6.1 with each stable update and stops serving
# the old one: the pin while it is there, else what is installed (its
# tarball is at hand), else the newest served. The series is then applied to
# a version it was not made on; a patch that no longer applies says so.
installed_version() {
	dpkg-query -W -f='${Status} ${Version}\n' linux-source-6.1 2>/dev/null |
		sed -n 's/^install ok installed //p'
}

pin_served() {
	apt-cache madison linux-source-6.1 2>/dev/null |
		awk -F'|' '{ gsub(/[[:space:]]/, "", $2); print $2 }' | grep -qxF "$PIN_VERSION"
}

newest_served() {
	apt-cache policy linux-source-6.1 2>/dev/null |
		sed -n 's/^[[:space:]]*Candidate:[[:space:]]*//p' | grep -v '^(none)$' || true
}

# Sets DEB_VERSION and VERSION_WHY; 1 when there is no version to take.
choose_version() {
	local inst cand

	if [ -n "${KERNEL_DEB_VERSION:-}" ]; then
		DEB_VERSION=$KERNEL_DEB_VERSION
		VERSION_WHY="set by KERNEL_DEB_VERSION"
		return 0
	fi
	inst=$(installed_version)
	if [ "$inst" = "$PIN_VERSION" ] || pin_served; then
		DEB_VERSION=$PIN_VERSION
		VERSION_WHY="the pinned version"
		return 0
	fi
	if [ -n "$inst" ]; then
		DEB_VERSION=$inst
		VERSION_WHY="the installed version; the pinned $PIN_VERSION is not served"
		return 0
	fi
	cand=$(newest_served)
	if [ -n "$cand" ]; then
		DEB_VERSION=$cand
		VERSION_WHY="the newest served; the pinned $PIN_VERSION is not served"
		return 0
	fi
	return 1
}

DEB_VERSION=
VERSION_WHY=
if ! choose_version && [ "$mode" = build ]; then
	# a fresh machine may have no package lists yet
	log "linux-source-6.1: neither installed nor served; apt-get update"
	sudo_=
	[ "$(id -u)" = 0 ] || sudo_=sudo
	$sudo_ apt-get update >&2 || true
	choose_version || true
fi
[ -n "$DEB_VERSION" ] ||
	die "linux-source-6.1 is neither installed nor served by apt (pinned: $PIN_VERSION)"
if [ "$DEB_VERSION" = "$PIN_VERSION" ]; then
	log "linux-source-6.1 $DEB_VERSION ($VERSION_WHY)"
else
	# not subject to -q: a build on another version than the pin is news
	echo "kernel-build: linux-source-6.1 $DEB_VERSION ($VERSION_WHY)" >&2
fi
SRC="$CACHE/src/linux-$DEB_VERSION"
OBJ="$CACHE/obj/linux-$DEB_VERSION"

# apply_series CMD...: runs "CMD... PATCH" for each patch of the series in
# order; on the first that fails, says which patch, on what, and why.
apply_series() {
	local p out

	APPLIED=0
	while read -r p; do
		if ! out=$("$@" "$KDIR/patches/$p" 2>&1); then
			echo "kernel-build: error: patch $p does not apply to linux-source-6.1" \
			     "$DEB_VERSION ($VERSION_WHY):" >&2
			echo "$out" | sed 's/^/    /' >&2
			echo "kernel-build: refresh kernel/patches on it (scripts/kernel-patches.sh" \
			     "import, rebase, export; see kernel/README.md)" >&2
			return 1
		fi
		APPLIED=$((APPLIED + 1))
	done < <(series_patches)
}

# --check-series: the series against the chosen version's pristine source,
# without building: the cached git tree when there is one (a second), else
# the files the series touches, out of the tarball.
check_series() {
	local tar=$source_tar

	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if [ -z "$tar" ] && git -C "$SRC" rev-parse -q --verify pristine >/dev/null 2>&1; then
		GIT_INDEX_FILE=$tmp/index git -C "$SRC" read-tree pristine
		apply_series env GIT_INDEX_FILE="$tmp/index" git -C "$SRC" apply --cached \
			--whitespace=nowarn || exit 1
		log "the series ($APPLIED patches) applies to $SRC"
		return 0
	fi
	if [ -z "$tar" ]; then
		[ "$(installed_version)" = "$DEB_VERSION" ] && tar=/usr/src/linux-source-6.1.tar.xz
		if [ ! -f "$tar" ]; then
			echo "kernel-build: linux-source-6.1 $DEB_VERSION is not installed," \
			     "and there is no source tree of it in $CACHE" >&2
			exit 3
		fi
	fi
	[ -f "$tar" ] || die "$tar: no such file"
	mkdir "$tmp/src"
	# files a patch creates are not in the tarball: tar says so, git apply
	# is the judge
	series_patches | sed "s|^|$KDIR/patches/|" | xargs sed -n 's|^--- a/||p' | sort -u |
		sed 's|^|linux-source-6.1/|' >"$tmp/files"
	$NICE tar -xJf "$tar" -C "$tmp/src" --strip-components=1 -T "$tmp/files" 2>/dev/null || true
	apply_series git -C "$tmp/src" apply --whitespace=nowarn || exit 1
	log "the series ($APPLIED patches) applies to $tar"
}

if [ "$mode" = version ]; then
	echo "$DEB_VERSION"
	exit 0
fi
if [ "$mode" = check ]; then
	check_series
	exit 0
fi

# The cache key: everything that decides what gets built.
cache_key() {
	{
		echo "deb $DEB_VERSION recipe $RECIPE"
		sha256sum "$KDIR/config.fragment"
		[ -f "$KDIR/selftests.list" ] && sha256sum "$KDIR/selftests.list"
		[ -f "$KDIR/patches/series" ] && sha256sum "$KDIR/patches/series"
		series_patches | while read -r p; do
			sha256sum "$KDIR/patches/$p"
		done
	} | sed "s|$ROOT/||" | sha256sum | cut -c1-16
}

KEY=$(cache_key)
IMG="$CACHE/images/$KEY"

if [ "$mode" = print ]; then
	[ -f "$IMG/bzImage" ] || exit 1
	echo "$IMG"
	exit 0
fi

if [ "$apply" = 1 ] && [ -f "$IMG/bzImage" ] && [ "$force" = 0 ]; then
	log "cached: $IMG"
	echo "$IMG"
	exit 0
fi

# --- 1. packages --------------------------------------------------------------
install_pkgs() {
	local missing=() p
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing+=("$p")
	done
	local have
	have=$(dpkg-query -W -f='${Status} ${Version}' linux-source-6.1 2>/dev/null || true)
	case "$have" in
	*"ok installed $DEB_VERSION") ;;
	*) missing+=("linux-source-6.1=$DEB_VERSION") ;;
	esac
	[ ${#missing[@]} = 0 ] && return 0
	log "installing: ${missing[*]}"
	local sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
		$sudo apt-get update >&2
		$sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "cannot install ${missing[*]}"
	fi
}
install_pkgs

# --- 2. pristine source as a git tree ------------------------------------------
git_k() { git -C "$SRC" -c user.name=kernel-build -c user.email=kernel-build@localhost "$@"; }

if [ ! -e "$SRC/.git/refs/tags/pristine" ] && ! git -C "$SRC" rev-parse -q --verify pristine >/dev/null 2>&1; then
	log "unpacking linux-source-6.1 $DEB_VERSION into $SRC"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	$NICE tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$SRC.tmp" --strip-components=1
	git -C "$SRC.tmp" init -q
	git -C "$SRC.tmp" config core.autocrlf false
	git -C "$SRC.tmp" config gc.auto 0
	$NICE git -C "$SRC.tmp" add -A -f
	git -C "$SRC.tmp" -c user.name=kernel-build -c user.email=kernel-build@localhost \
		commit -q -m "Linux $DEB_VERSION (Debian linux-source-6.1)"
	git -C "$SRC.tmp" tag pristine
	mv "$SRC.tmp" "$SRC"
fi

# --- 3. apply the series --------------------------------------------------------
# The patched tree is computed in a private index, then checked out: git only
# rewrites files whose content differs, so unchanged files keep their mtime
# and the rebuild stays incremental.
if [ "$apply" = 1 ]; then
	if [ "$force" = 0 ] && [ -n "$(git -C "$SRC" status --porcelain --untracked-files=no)" ]; then
		die "$SRC has uncommitted changes; commit them, or pass --force to discard them"
	fi
	idx=$(mktemp)
	trap 'rm -f "$idx"' EXIT
	GIT_INDEX_FILE=$idx git -C "$SRC" read-tree pristine
	apply_series env GIT_INDEX_FILE="$idx" git -C "$SRC" apply --cached --whitespace=nowarn ||
		exit 1
	tree=$(GIT_INDEX_FILE=$idx git -C "$SRC" write-tree)
	if [ "$(git -C "$SRC" rev-parse 'HEAD^{tree}')" != "$tree" ]; then
		commit=$(git_k commit-tree "$tree" -p pristine -m "kernel/patches/series $KEY")
		git_k checkout -q -f -B series "$commit"
		log "applied $APPLIED patch(es)"
	fi
fi

# --- 4. configure ------------------------------------------------------------------
mkdir -p "$OBJ"
kmake() { $NICE make -C "$SRC" O="$OBJ" ARCH=x86_64 -j"$JOBS" "$@"; }

cfgtmp="$OBJ/.config.wanted"
(
	cd "$OBJ"
	# Configure in a scratch copy so an unchanged result keeps the old
	# .config (and its mtime) untouched.
	tmp=$(mktemp -d)
	make -s -C "$SRC" O="$tmp" ARCH=x86_64 tinyconfig >/dev/null 2>&1
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$tmp" "$tmp/.config" "$KDIR/config.fragment" >/dev/null 2>&1
	make -s -C "$SRC" O="$tmp" ARCH=x86_64 olddefconfig >/dev/null 2>&1
	cp "$tmp/.config" "$cfgtmp"
	rm -rf "$tmp"
)
bad=0
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$cfgtmp" || { echo "kernel-build: config: $line did not stick" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }; sym=${sym% is not set}
		! grep -q "^$sym=" "$cfgtmp" || { echo "kernel-build: config: $sym should be off" >&2; bad=1; } ;;
	esac
done < "$KDIR/config.fragment"
[ "$bad" = 0 ] || die "config fragment not satisfied (see above)"
if ! cmp -s "$cfgtmp" "$OBJ/.config"; then
	cp "$cfgtmp" "$OBJ/.config"
	log "configuration updated"
fi

# --- 5. build --------------------------------------------------------------------------
log "building bzImage in $OBJ (make -j$JOBS, nice 19)"
start=$(date +%s)
if [ "$quiet" = 1 ]; then
	kmake bzImage >"$OBJ/build.log" 2>&1 || { tail -50 "$OBJ/build.log" >&2; die "kernel build failed"; }
else
	kmake bzImage >&2
fi
kmake -s headers_install >/dev/null

# --- 6. selftests (static, from the patched tree) -------------------------------------------
stdir="$OBJ/selftests"
rm -rf "$stdir"
mkdir -p "$stdir"
if [ -f "$KDIR/selftests.list" ]; then
	# One program per line: its main source, then any other sources.
	while read -r line; do
		line=${line%%#*}
		read -r -a srcs <<< "$line"
		[ ${#srcs[@]} -gt 0 ] || continue
		src=${srcs[0]}
		[ -f "$SRC/$src" ] || { log "selftest $src is not in the tree (series not applied?), skipped"; continue; }
		name=$(basename "$src" .c)
		$NICE gcc -static -O2 -Wall -I"$OBJ/usr/include" -I"$(dirname "$SRC/$src")" \
			-o "$stdir/$name" "${srcs[@]/#/$SRC/}" -lpthread ||
			die "selftest $src does not build"
	done < "$KDIR/selftests.list"
fi
end=$(date +%s)
log "build took $((end - start)) s"

# --- 7. publish ----------------------------------------------------------------------------------
if [ "$apply" = 0 ]; then
	out="$CACHE/images/dev"
else
	out="$IMG"
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cp "$OBJ/arch/x86/boot/bzImage" "$out.tmp/bzImage"
cp "$OBJ/.config" "$out.tmp/config"
cp -r "$stdir" "$out.tmp/selftests"
{
	echo "debian_version=$DEB_VERSION"
	echo "debian_version_why=$VERSION_WHY"
	echo "key=$KEY"
	echo "series_head=$(git -C "$SRC" rev-parse HEAD)"
	echo "build_seconds=$((end - start))"
} > "$out.tmp/info"
rm -rf "$out"
mv "$out.tmp" "$out"
ln -sfn "$out" "$CACHE/current"
log "image: $out"
echo "$out"
