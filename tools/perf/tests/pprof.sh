#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `go tool pprof perf.data` runs `perf_to_profile -i IN -o OUT -f` from PATH; ours must make
# that work on files from Linux perf and from perf-buildid: the expected top functions, every
# mapping with the build ID readelf reads, and perf_to_profile's own command line and exit
# statuses. Prints TAP; 77 (skip) without go, perf or perf_event_open.
#
# Usage: pprof.sh PERF_TO_PROFILE PERF-BUILDID WORKDIR
set -u
PTP=$1
PB=$2
W=$3
WL=$(dirname "$PB")/pbid-workload
LIB=$(dirname "$PB")/libpbidwork.so
PERF=${PERF:-/usr/bin/perf}
# shellcheck source=perf-record.sh disable=SC1091 # beside this script
. "$(dirname "$0")/perf-record.sh"

for tool in go "$PERF"; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool not installed"; exit 77; }
done
rm -rf "$W"
mkdir -p "$W/home" "$W/bin"
cd "$W" || exit 1
# pprof finds the converter by name on PATH; a private HOME and GOCACHE keep it offline and
# away from the user's pprof settings.
ln -s "$PTP" bin/perf_to_profile
export PATH="$W/bin:$PATH" HOME="$W/home" GOCACHE="$W/gocache" PPROF_TMPDIR="$W/home"
unset DEBUGINFOD_URLS

n=0 failed=0
check() {
	local d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}
readelf_id() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }
# top_functions FILE: the function column of `go tool pprof -top`, heaviest first.
top_functions() { awk 'f && NF >= 6 { print $6 } /flat%/ { f = 1 }' "$1"; }

if ! "$PB" record -q -F 99 -o probe.data -- true 2>probe.err; then
	echo "1..0 # SKIP perf_event_open unavailable: $(head -1 probe.err)"
	exit 77
fi
perf_record -q -N -F 999 -o perf.data -- "$WL" 600 >/dev/null 2>perf.err ||
	{ echo "# perf record failed:"; sed 's/^/#   /' perf.err; }
"$PB" record -q -F 999 -o ours.data -- "$WL" 600 >/dev/null 2>ours.err ||
	{ echo "# perf-buildid record failed:"; sed 's/^/#   /' ours.err; }
echo "# $("$PERF" --version), $(go version)"

for f in perf ours; do
	go tool pprof -top "$f.data" >"$f.top" 2>"$f.top.err"
	check "go tool pprof -top $f.data exits 0" [ $? -eq 0 ]
	sed 's/^/#   /' "$f.top" | head -12
	top_functions "$f.top" >"$f.funcs"
	check "$f.data: the top function is pbid_work_spin (the library's loop)" \
		[ "$(head -1 "$f.funcs")" = pbid_work_spin ]
	# The workload's two loops in their order. Between them the host's kernel and, under ASan,
	# the leak scan at the workload's exit can take a few percent each: main_spin has about 5%.
	check "$f.data: main_spin (the executable's loop) is the workload's second" \
		[ "$(grep -xE 'pbid_work_spin|main_spin' "$f.funcs" | tr '\n' ' ')" = "pbid_work_spin main_spin " ]
	go tool pprof -raw "$f.data" >"$f.raw" 2>/dev/null
	check "$f.data: the library's mapping carries its readelf build ID" \
		grep -qE " $LIB $(readelf_id "$LIB") " "$f.raw"
	check "$f.data: the executable's mapping carries its readelf build ID" \
		grep -qE " $WL $(readelf_id "$WL") " "$f.raw"
	# Already symbolized by build ID: pprof's own symbolization has nothing left to change.
	go tool pprof -symbolize=none -top "$f.data" 2>/dev/null | top_functions /dev/stdin >"$f.none"
	check "$f.data: -symbolize=none shows the same functions" \
		bash -c "[ -s '$f.funcs' ] && diff -q '$f.funcs' '$f.none'"
done

# perf_to_profile's own contract, as pprof and scripts use it; the statuses are perf-buildid's
# (2 bad command line, 3 bad input, 1 failure), all a failure to pprof.
"$PTP" >/dev/null 2>usage.err
check "no arguments: exit 2 with the usage" bash -c "[ $? -eq 2 ] && grep -q 'perf_to_profile -i' usage.err"
"$PTP" -i perf.data >/dev/null 2>&1
check "no -o: exit 2" [ $? -eq 2 ]
"$PTP" -i perf.data -o >/dev/null 2>&1
check "-o without its argument: exit 2" [ $? -eq 2 ]
"$PTP" -x -i perf.data -o x.pb >/dev/null 2>&1
check "unknown option: exit 2" [ $? -eq 2 ]
echo keep >exists.pb
"$PTP" -i perf.data -o exists.pb 2>exists.err
check "existing output without -f: exit 2, output untouched" \
	bash -c "[ $? -eq 2 ] && [ \"\$(cat exists.pb)\" = keep ] && grep -q 'already exists' exists.err"
"$PTP" -i perf.data -o exists.pb -f
check "existing output with -f: exit 0, a gzip profile" \
	bash -c "[ $? -eq 0 ] && [ \"\$(head -c2 exists.pb | od -An -tx1 | tr -d ' ')\" = 1f8b ]"
head -c 300 perf.data >cut.data
"$PTP" -i cut.data -o cut.pb 2>cut.err
rc=$?
check "truncated input: exit 3, one line naming the file ($(head -1 cut.err))" \
	bash -c "[ $rc -eq 3 ] && [ \$(wc -l <cut.err) -eq 1 ] && grep -q 'cut.data' cut.err"
go tool pprof -top cut.data >/dev/null 2>&1
check "go tool pprof on a truncated perf.data fails" [ $? -ne 0 ]
"$PTP" -i missing.data -o m.pb 2>/dev/null
check "missing input: exit 3, no output" bash -c "[ $? -eq 3 ] && [ ! -e m.pb ]"

echo "1..$n"
[ $failed -eq 0 ]
