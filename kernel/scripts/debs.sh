#!/usr/bin/env bash
# debs.sh PKG[=VERSION][:ARCH]...: Debian packages the lab reads but never installs (Debian 11's
# kernel config and headers, an arm64 busybox for the arm64 guest). Each is fetched once with
# `apt-get download` from the apt sources that scripts/install-deps.sh set up, unpacked with
# dpkg-deb -x under the cache, and its directory printed, one line per package.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -gt 0 ] || die "usage: debs.sh PKG[=VERSION]..."

DEBS=$CACHE/debian
mkdir -p "$DEBS"
exec 9>"$DEBS/.lock"
flock 9

for spec in "$@"; do
	dir=$DEBS/$(echo "$spec" | tr '=:' '__')
	if [ ! -f "$dir/.lab-ready" ]; then
		progress debs "apt-get download $spec"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp/deb"
		(cd "$dir.tmp/deb" && apt-get download -q "$spec" >/dev/null 2>"$dir.tmp/apt.log") || {
			cat "$dir.tmp/apt.log" >&2
			die "apt-get download $spec failed (scripts/install-deps.sh sets up the sources)"
		}
		for deb in "$dir.tmp"/deb/*.deb; do
			dpkg-deb -x "$deb" "$dir.tmp/root"
		done
		mv "$dir.tmp" "$dir"
		touch "$dir/.lab-ready"
	fi
	echo "$dir/root"
done
