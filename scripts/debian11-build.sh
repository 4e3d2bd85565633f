#!/usr/bin/env bash
# debian11-build.sh [--root-only]: builds perf-buildid, runs its unit tests and builds its .deb
# in a Debian 11 (bullseye) root: gcc 10, cmake 3.18 and bullseye's libelf, libdw and
# GoogleTest, the system where the patched 5.10 kernel runs.
#
# The root is made with mmdebstrap from this machine's own Debian mirror (the sources come
# from scripts/debian-sources.sh) and cached outside the clone, like the kernels, under
# $CACHE/roots/, keyed by its package list. The build directory lives in the root, so a second
# run rebuilds only what changed; a fresh clone gives every file a new time, so the compiles
# also go through the root's own ccache. Its cache lives beside the root, not in the host's:
# another ccache version, another compiler. Needs root (chroot and mounts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$repo/kernel/scripts/common.sh"
. "$here/debian-sources.sh"

# The root holds debian/control's Build-Depends (names only: "debhelper-compat (= 13)" is
# provided by debhelper) and what dpkg-buildpackage and make-deb.sh run, so a new
# build dependency reaches the root, and its cache key, by itself.
mapfile -t ROOT_PKGS < <(
	{
		echo build-essential ccache fakeroot rsync
		sed -n '/^Build-Depends:/,/^[^ ]/p' "$repo/debian/control" | sed 's/^Build-Depends://' |
			grep -v '^[A-Z]' | tr ',' '\n' | sed 's/[(<].*//; s/[[:space:]]//g; s/^debhelper-compat$/debhelper/'
	} | tr ' ' '\n' | grep -v '^$' | sort -u)
ROOT_EPOCH=2  # bump when the way the root is made changes

root_key() { { echo "epoch $ROOT_EPOCH"; printf '%s\n' "${ROOT_PKGS[@]}"; } | sha256sum | cut -c1-16; }

make_root() {
	local dir=$1 sources host
	host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	sources=$(mktemp --suffix=.sources)
	# bullseye's last point release only, not its security suite: the root is a build check,
	# and the point release is fixed, while the security suite moves and its index can name a
	# package the mirror's pool does not hold yet (seen with libarchive-dev, a 404).
	debian_sources /etc/apt "$host" bullseye |
		awk 'BEGIN { RS = ""; ORS = "\n\n" } !/Suites:[^\n]*-security/' >"$sources" ||
		{ rm -f "$sources"; return 1; }
	progress "debian11 root" "mmdebstrap bullseye (${#ROOT_PKGS[@]} packages)"
	rm -rf "$dir.tmp"
	local rc=0
	mmdebstrap --quiet --variant=apt --include="$(IFS=,; echo "${ROOT_PKGS[*]}")" \
		bullseye "$dir.tmp" "$sources" || rc=$?
	rm -f "$sources"
	[ "$rc" = 0 ] || { rm -rf "$dir.tmp"; die "mmdebstrap failed (exit $rc)"; }
	mv "$dir.tmp" "$dir"
	# Roots of older package lists are never used again (about 550 MB each).
	local old
	for old in "$CACHE"/roots/debian11-*; do
		[ "$old" = "$dir" ] || [ ! -d "$old" ] || rm -rf "$old"
	done
}

[ "$(id -u)" -eq 0 ] || die "debian11-build.sh needs root (chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (run scripts/install-deps.sh)"
root=$CACHE/roots/debian11-$(root_key)
mkdir -p "$CACHE/roots"
exec 8>"$CACHE/roots/lock"
flock 8
[ -d "$root" ] || make_root "$root"
if [ "${1:-}" = --root-only ]; then
	echo "$root"
	exit 0
fi

# The tree as git sees it (committed or not, without build/), copied with its file times so
# that the build directory in the root stays valid between runs. The copy starts empty: rsync
# --delete does not remove what --files-from no longer lists, and a file deleted from the tree
# (a renamed test, say) would still be built there.
list=$(mktemp)
trap 'rm -f "$list"' EXIT
git -C "$repo" ls-files -co --exclude-standard >"$list"
rm -rf "$root/src"
mkdir -p "$root/src" "$root/build"
rsync -a --files-from="$list" "$repo/" "$root/src/"
ccache=$CACHE/ccache-debian11
mkdir -p "$ccache"
commit=$(git -C "$repo" rev-parse --short=12 HEAD)
git -C "$repo" diff --quiet HEAD -- . || commit+=-dirty

# A private mount namespace: /proc, /sys and /dev for the tests, gone when the build ends.
progress "debian11 build" "make deb (build, ctest), apt-get install in $(basename "$root")"
unshare --mount --fork bash -s "$root" "$commit" "$ccache" <<'INNER'
set -euo pipefail
root=$1
commit=$2
ccache=$3
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mkdir -p "$root/ccache"
mount --bind "$ccache" "$root/ccache"
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
	PBID_GIT_COMMIT="$commit" CCACHE_DIR=/ccache CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=2G \
	bash -s <<'CHROOT'
set -euo pipefail
echo "debian11: $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | head -1)," \
	"$(cmake --version | head -1), gtest $(dpkg-query -W -f='${Version}' libgtest-dev)," \
	"libelf $(dpkg-query -W -f='${Version}' libelf-dev)"
# One build: the package's, whose dh_auto_test runs ctest on it (a failing test fails it).
/src/scripts/make-deb.sh /build/deb >/dev/null ||
	{ grep -E -m20 'error|Failed|\*\*\*' /build/deb/build.log; exit 1; }
grep -E 'tests passed|tests failed' /build/deb/build.log | sed 's/^/debian11: ctest: /'
grep -E '\*\*\*Skipped|Not Run' /build/deb/build.log | sed 's/^/debian11: ctest: /' || true
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq /build/deb/perf-buildid_*.deb >/build/apt.log 2>&1 || { cat /build/apt.log; exit 1; }
echo "debian11: apt-get install ./perf-buildid_*.deb: $(perf-buildid --version), $(man -w perf-buildid-record)"
dpkg-deb -I /build/deb/perf-buildid_*.deb | sed -n 's/^ Depends:/debian11: Depends:/p'
apt-get purge -y -qq perf-buildid >/dev/null 2>&1
CHROOT
INNER
mkdir -p "$repo/build/debian11"
cp "$root"/build/deb/*.deb "$repo/build/debian11/"
echo "debian11: OK, packages in build/debian11/"
