#!/usr/bin/env bash
# deb-test.sh DEB-DIR: the packages `make deb` built must pass lintian without an error and
# install with dpkg --root into a scratch directory, where the command runs and its man
# pages render. Prints TAP and the file list of each package.
set -uo pipefail
dir=$1
n=0 failed=0
check() {
	local d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}
debs=()
for p in perf-buildid libpbid-dev; do
	f=$(ls "$dir"/"${p}"_*.deb 2>/dev/null | head -1)
	check "$p .deb was built" [ -n "$f" ]
	[ -n "$f" ] && debs+=("$f")
done
[ ${#debs[@]} -eq 2 ] || { echo "1..$n"; exit 1; }

lintian --fail-on error --pedantic -I "${debs[@]}" >"$dir/lintian.out" 2>&1
rc=$?
sed 's/^/# lintian: /' "$dir/lintian.out" | grep -v 'root privileges'
check "lintian: no errors (exit $rc, $(grep -c '^E:' "$dir/lintian.out") E: lines)" [ $rc -eq 0 ]

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The scratch root has no libc: dependencies are checked by apt on a real system, not here.
dpkg --root="$root" --force-depends --force-script-chrootless -i "${debs[@]}" >"$dir/dpkg.out" 2>&1
rc=$?
check "dpkg --root installs both packages (exit $rc)" \
	bash -c "[ $rc -eq 0 ] || { sed 's/^/#   /' '$dir/dpkg.out'; false; }"
for p in perf-buildid libpbid-dev; do
	dpkg --root="$root" -L "$p" | sed "s/^/# $p: /"
done
v=$("$root/usr/bin/perf-buildid" --version 2>&1)
check "installed perf-buildid --version: $v" bash -c "[[ '$v' == 'perf-buildid '* ]]"
check "installed perf_to_profile -i -o: usage and exit 2 without arguments" \
	bash -c "'$root/usr/bin/perf_to_profile' 2>&1 | grep -q 'perf_to_profile -i'; [ \${PIPESTATUS[0]} -eq 2 ]"
for page in perf-buildid perf-buildid-record perf-buildid-buildid-list perf-buildid-maps \
	perf-buildid-script perf-buildid-dump perf-buildid-report perf_to_profile; do
	check "man $page (installed, MANPATH of the scratch root)" \
		bash -c "MANPATH='$root/usr/share/man' MANWIDTH=100 man $page 2>/dev/null | grep -q '^NAME'"
done
check "libpbid-dev: pbid.pc, pbidConfig.cmake, libpbid.a, the uapi header" bash -c "
	ls '$root'/usr/lib/*/pkgconfig/pbid.pc '$root'/usr/lib/*/cmake/pbid/pbidConfig.cmake \
	   '$root'/usr/lib/*/libpbid.a '$root'/usr/include/pbid/uapi/linux/perf_event.h >/dev/null"
echo "1..$n"
[ $failed -eq 0 ]
