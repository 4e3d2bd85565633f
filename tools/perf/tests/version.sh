#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `perf-buildid --version` names the project version and the commit, and the files we record
# carry the same string in the VERSION feature, where Linux perf (report --header-only) reads
# it. Prints TAP; 77 (skip) without perf or perf_event_open.
#
# Usage: version.sh PERF-BUILDID VERSION-FILE WORKDIR
set -u
PB=$1
want_version=$(head -1 "$2")
W=$3
PERF=${PERF:-/usr/bin/perf}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

n=0 failed=0
check() {
	local d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}

v=$("$PB" --version)
rc=$?
echo "# $v"
check "--version exits 0" [ $rc -eq 0 ]
check "--version names version $want_version and a commit" \
	bash -c '[[ $1 =~ ^perf-buildid\ ${2//./\\.}\ \(git\ ([0-9a-f]{7,40}(-dirty)?|unknown)\)$ ]]' \
	_ "$v" "$want_version"

if [ ! -x "$PERF" ]; then
	echo "1..$n # SKIP the VERSION feature: $PERF not installed"
	[ $failed -eq 0 ] && exit 77 || exit 1
fi
if ! "$PB" record -q -F 99 -o v.data -- true 2>rec.err; then
	echo "1..$n # SKIP the VERSION feature: $(head -1 rec.err)"
	[ $failed -eq 0 ] && exit 77 || exit 1
fi
"$PERF" report --header-only -i v.data >header.out 2>header.err
check "perf report --header-only reads the file" [ $? -eq 0 ]
sed -n 's/^/# /; /perf version/p' header.out
check "perf shows our --version as the file's perf version" \
	grep -qxF "# perf version : $v" header.out
echo "1..$n"
[ $failed -eq 0 ]
