#!/bin/bash
# Move the patch series between kernel/patches/ and a git tree of the
# kernel source, for working on the patches.
#
#   scripts/kernel-patches.sh import   make branch "dev" in the source tree
#                                      (see kernel-build.sh) = pristine +
#                                      kernel/patches/series, one commit
#                                      per patch (git am)
#   scripts/kernel-patches.sh export   write kernel/patches/*.patch and
#                                      series from the commits
#                                      pristine..HEAD of the source tree
#
# Work on "dev": edit, commit (git commit --fixup / rebase -i as usual),
# export, then scripts/kernel-build.sh (which rebuilds incrementally).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEB_VERSION=$("$ROOT/scripts/kernel-build.sh" -q --print-version)
CACHE=${CRIU_KERNEL_CACHE:-$HOME/.cache/criu-kernel}
SRC=${KERNEL_SRC:-$CACHE/src/linux-$DEB_VERSION}
PATCHES="$ROOT/kernel/patches"

[ -d "$SRC/.git" ] || { echo "no source tree at $SRC: run scripts/kernel-build.sh first" >&2; exit 1; }
g() { git -C "$SRC" -c user.name="criu-ng developers" -c user.email=criu-ng@localhost "$@"; }

case "${1:-}" in
export)
	[ -z "$(g status --porcelain --untracked-files=no)" ] ||
		{ echo "uncommitted changes in $SRC" >&2; exit 1; }
	mkdir -p "$PATCHES"
	rm -f "$PATCHES"/*.patch
	# --zero-commit and --no-signature keep the files identical from one
	# export to the next when the commits did not change.
	g format-patch -q --zero-commit --no-signature -o "$PATCHES" pristine..HEAD
	(
		echo "# Applied in this order on Debian's linux-source-6.1 $DEB_VERSION."
		cd "$PATCHES" && ls -1 *.patch
	) > "$PATCHES/series"
	echo "exported $(ls "$PATCHES"/*.patch | wc -l) patches to $PATCHES"
	;;
import)
	[ -z "$(g status --porcelain --untracked-files=no)" ] ||
		{ echo "uncommitted changes in $SRC" >&2; exit 1; }
	g checkout -q -B dev pristine
	sed -e 's/#.*//' "$PATCHES/series" | grep -v '^[[:space:]]*$' | while read -r p; do
		g am -q --keep-cr "$PATCHES/$p"
	done
	g log --oneline pristine..HEAD
	;;
*)
	sed -n '2,14p' "$0" >&2
	exit 2
	;;
esac
