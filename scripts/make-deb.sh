#!/usr/bin/env bash
# make-deb.sh OUTDIR: builds the perf-buildid and libpbid-dev .debs into OUTDIR with
# dpkg-buildpackage (debhelper, debian/) from a copy of the tree in OUTDIR/src, so that
# neither the build nor dpkg-buildpackage's ../*.deb touch the clone. debian/changelog is
# written into the copy from VERSION, which stays the one place the version is kept.
# Set DEB_BUILD_OPTIONS=nocheck to skip the unit tests during the package build; the tests are
# then not built either (BUILD_TESTING=OFF), and the nocheck build profile comes with it, as
# Debian's convention pairs the two: the profile drops the tests' Build-Depends.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
src=$out/src
version=$(head -1 "$repo/VERSION")

# The commit goes into --version; a copy without .git (the Debian 11 root) passes it in.
if [ -z "${PBID_GIT_COMMIT:-}" ] && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	PBID_GIT_COMMIT=$(git -C "$repo" rev-parse --short=12 HEAD)
	git -C "$repo" diff --quiet HEAD -- . || PBID_GIT_COMMIT+=-dirty
fi
export PBID_GIT_COMMIT=${PBID_GIT_COMMIT:-unknown}

# The lab's ccache (the Makefile passes lab_ccache_vars of kernel/scripts/common.sh), when there
# is one, with the copy as base dir: a second clone compiles nothing twice.
if command -v ccache >/dev/null && [ -n "${CCACHE_DIR:-}" ]; then
	export PBID_CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
	export CCACHE_BASEDIR=$src
fi

mkdir -p "$src"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$repo" ls-files -co --exclude-standard >"$list"
else
	(cd "$repo" && find . -path ./build -prune -o -path ./debian/changelog -prune -o \
		\( -type f -o -type l \) -print) >"$list"
fi
# Compared by content: a file that changed is copied with the time of the copy, so that make
# rebuilds what depends on it even when the tree it came from has older times than the last
# build (another clone built in this OUTDIR, as the Debian 11 root's is shared); an unchanged
# file keeps its time, so a second build is incremental.
rsync -rlpgoD --checksum --delete --files-from="$list" --exclude=/build "$repo/" "$src/"
# rsync does not delete what --files-from no longer lists. A source file that left the tree (a
# renamed test: CMake globs them) must leave the copy too; the build directory stays.
sed 's|^\./||' "$list" | sort >"$list.want"
(cd "$src" && find tools include -type f | sort) | comm -23 - "$list.want" |
	while read -r f; do rm -f "$src/$f"; done
rm -f "$list.want"
when=$(git -C "$repo" log -1 --format=%aD 2>/dev/null || date -R)
cat >"$src/debian/changelog" <<CHANGELOG
perf-buildid ($version) unstable; urgency=medium

  * perf-buildid $version, git $PBID_GIT_COMMIT.

 -- buildid-mmap developers <buildid-mmap@example.org>  $when
CHANGELOG
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
# No pre-clean: the CMake build directory (obj-deb) is kept for an incremental build, only
# debhelper's record of finished steps and staged packages is dropped.
(cd "$src/debian" && rm -rf .debhelper debhelper-build-stamp files tmp perf-buildid \
	libpbid-dev ./*.substvars ./*.debhelper.log)
profiles=()
case " ${DEB_BUILD_OPTIONS:-} " in *" nocheck "*) profiles=(-Pnocheck) ;; esac
(cd "$src" && dpkg-buildpackage -b -nc -us -uc -j2 "${profiles[@]}" >"$out/build.log" 2>&1) ||
	{ tail -30 "$out/build.log" >&2; echo "make-deb: dpkg-buildpackage failed ($out/build.log)" >&2; exit 1; }
ls "$out"/*.deb
