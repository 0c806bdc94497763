# SPDX-License-Identifier: GPL-2.0-only
#
# What the scripts of scripts/ share, sourced first thing:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It changes to the repository's root and sets, the way the Python finds
# them too (test/zdtm/buildpaths.py):
#
#   ROOT        the repository's root, the working directory from now on
#   SELF        the running script, by its absolute path
#   BUILD_DIR   meson's build directory as given (default build; a relative
#               one is taken from ROOT)
#   B           the build directory, absolute
#   CRIU        the criu binary (default $B/criu/criu)
#   ZDTM_BUILD  the zdtm test programs (default $B/test/zdtm)
#   SUBREAPER   $B/contrib/subreaper/subreaper
#
# and defines need_built, run_reaped and reaped (below). Nothing is
# exported: a script exports what its children need.

SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
BUILD_DIR=${BUILD_DIR:-build}
case "$BUILD_DIR" in
/*) B=$BUILD_DIR ;;
*) B=$ROOT/$BUILD_DIR ;;
esac
CRIU=${CRIU:-$B/criu/criu}
ZDTM_BUILD=${ZDTM_BUILD:-$B/test/zdtm}
SUBREAPER=$B/contrib/subreaper/subreaper

# need_built NAME FILE...: build (scripts/build.sh, unless SKIP_BUILD=1),
# then exit 1 with a line from NAME unless every FILE is an executable.
need_built()
{
	local name=$1 f

	shift
	if [ -z "${SKIP_BUILD:-}" ]; then
		BUILD_DIR=$BUILD_DIR scripts/build.sh || exit 1
	fi
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			echo "$name: $f is missing (did the build succeed?)" >&2
			exit 1
		fi
	done
}

# reaped: this script runs under the subreaper run_reaped started.
reaped()
{
	[ "${CRIU_REAPED:-}" = "$SELF" ]
}

# run_reaped NAME FILE... -- ARGS...: for a script whose restored tasks are
# orphans once criu exits (PID 1 here may not reap them, and a zombie keeps
# its pid taken). The first time, need_built NAME FILE... and the
# subreaper, then run the script again with ARGS under $SUBREAPER, which
# reaps them; under the subreaper, return at once.
run_reaped()
{
	local name=$1
	local files=()

	shift
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	[ "$#" -gt 0 ] && shift
	reaped && return 0
	need_built "$name" "${files[@]}" "$SUBREAPER"
	export CRIU_REAPED=$SELF
	exec "$SUBREAPER" "$SELF" "$@"
}
