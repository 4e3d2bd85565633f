#!/usr/bin/env bash
# debian-perf-root.sh CODENAME: prints the path of a cached Debian root holding that release's
# linux-perf, making it first if needed (needs root). Used to check perf-buildid against perfs
# newer than the host's: tools/perf/tests/perf-in-root.sh runs the root's perf on this kernel.
#
# Each root's perf version is pinned below and is part of its cache key: a mirror that moves
# to another perf fails the build of the root with both versions named, and the pin is then
# moved on purpose (a new perf is a new interop target, not a silent change).
# The roots are made with mmdebstrap from this machine's own Debian sources
# (scripts/debian-sources.sh), like scripts/debian11-build.sh's, under $CACHE/roots/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$repo/kernel/scripts/common.sh"
. "$here/debian-sources.sh"

# CODENAME -> the upstream version `perf --version` must report (its prefix).
declare -A PERF_PIN=([trixie]=6.12 [sid]=7.2)
# binutils: newer perfs run addr2line for srcline and say so when it is missing.
ROOT_PKGS=(linux-perf binutils)
ROOT_EPOCH=1  # bump when the way the root is made changes

[ $# -eq 1 ] && [ -n "${PERF_PIN[$1]:-}" ] ||
	die "usage: $0 CODENAME (one of: ${!PERF_PIN[*]})"
release=$1
pin=${PERF_PIN[$release]}
root_key() { { echo "epoch $ROOT_EPOCH"; echo "perf $pin"; printf '%s\n' "${ROOT_PKGS[@]}"; } |
	sha256sum | cut -c1-16; }

make_root() {
	local dir=$1 sources host rc=0 opts=()
	host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	sources=$(mktemp --suffix=.sources)
	# sid has no security suite; its Release file carries a Valid-Until a week ahead, which a
	# mirror that is a frozen copy of the archive outlives: the packages are still signed.
	if [ "$release" = sid ]; then
		debian_sources /etc/apt "$host" sid 2>/dev/null |
			awk 'BEGIN { RS = ""; ORS = "\n\n" } !/Suites: sid-security/' >"$sources" || rc=$?
		opts=(--aptopt='Acquire::Check-Valid-Until "false"')
	else
		debian_sources /etc/apt "$host" "$release" >"$sources" || rc=$?
	fi
	[ "$rc" = 0 ] || { rm -f "$sources"; return 1; }
	progress "$release root" "mmdebstrap $release (${ROOT_PKGS[*]}, perf $pin)"
	rm -rf "$dir.tmp"
	mmdebstrap --quiet --variant=apt "${opts[@]}" --include="$(IFS=,; echo "${ROOT_PKGS[*]}")" \
		"$release" "$dir.tmp" "$sources" || rc=$?
	rm -f "$sources"
	[ "$rc" = 0 ] || { rm -rf "$dir.tmp"; die "mmdebstrap failed (exit $rc)"; }
	local got
	got=$(chroot "$dir.tmp" perf --version 2>&1 || true)
	case $got in
	"perf version $pin".*) ;;
	*)
		rm -rf "$dir.tmp"
		die "$release's linux-perf is now '$got', pinned to $pin: move PERF_PIN[$release] in $0"
		;;
	esac
	mv "$dir.tmp" "$dir"
	local old
	for old in "$CACHE/roots/perf-$release"-*; do
		[ "$old" = "$dir" ] || [ ! -d "$old" ] || rm -rf "$old"
	done
}

root=$CACHE/roots/perf-$release-$pin-$(root_key)
if [ ! -d "$root" ]; then
	[ "$(id -u)" -eq 0 ] || die "debian-perf-root.sh needs root to make $root (mmdebstrap, chroot)"
	command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (run scripts/install-deps.sh)"
	mkdir -p "$CACHE/roots"
	exec 8>"$CACHE/roots/lock"
	flock 8
	[ -d "$root" ] || make_root "$root"
fi
echo "$root"
