#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Smoke test of perf-buildid that runs in the VM guests (busybox sh, no readelf) and on the
# host: record pbid-workload, then check that `maps` and `buildid-list` report the build ids
# of the workload and of its library that readelf saw at build time (pbid-workload.buildids,
# installed next to the workload). Prints TAP; exits non-zero when a check fails.
#
# Usage: vm-smoke.sh PATH/TO/perf-buildid PATH/TO/pbid-workload [MILLISECONDS [UNWIND]]
#
# With UNWIND (the unwinding fixture: an -O2 -fomit-frame-pointer program whose hot function
# sits four calls deep in a shared library beside it), also: a --call-graph dwarf recording
# that report unwinds to main, and perf's everyday command lines (-a -- CMD, -C, -p a,b, -t,
# several -e with :u and :k).
#
# On kernels with attr.build_id (5.12+, 5.10-buildid) the ids come from the kernel's MMAP2
# records (source "kernel"); on pristine 5.10 from /proc/PID/map_files (source "file").
# Either is fine; a wrong id is not.

PB=$1
WL=$2
MS=${3:-400}
if [ -z "$PB" ] || [ -z "$WL" ]; then
	echo "usage: $0 PERF-BUILDID WORKLOAD [MILLISECONDS]" >&2
	exit 2
fi
EXPECTED=$WL.buildids
TMP=${TMPDIR:-/tmp}/pbid-smoke.$$
mkdir -p "$TMP" || exit 1
trap 'rm -rf "$TMP"' EXIT

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}
check() {  # check DESCRIPTION COMMAND...
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

echo "TAP version 13"
echo "# kernel $(uname -r)"

if [ -r "$EXPECTED" ]; then
	ok "expected ids present ($EXPECTED)"
else
	not_ok "expected ids present ($EXPECTED)"
	exit 1
fi
wl_id=$(awk '$2 == "pbid-workload" { print $1 }' "$EXPECTED")
lib_id=$(awk '$2 == "libpbidwork.so" { print $1 }' "$EXPECTED")
echo "# expected: pbid-workload $wl_id, libpbidwork.so $lib_id"

"$PB" record -q -F 999 -o "$TMP/perf.data" -- "$WL" "$MS" >"$TMP/record.out" 2>"$TMP/record.err"
rc=$?
sed 's/^/# record: /' "$TMP/record.err"
if [ "$rc" -ne 0 ] && [ -n "${PBID_SKIP_WITHOUT_PERF_EVENTS:-}" ] &&
	grep -q 'Permission denied\|Operation not permitted\|Function not implemented' "$TMP/record.err"; then
	echo "# SKIP perf_event_open not allowed here"
	exit 77
fi
check "record exits 0 (rc=$rc)" [ "$rc" -eq 0 ]

"$PB" maps -i "$TMP/perf.data" >"$TMP/maps" 2>"$TMP/maps.err"
rc=$?
sed 's/^/# maps: /' "$TMP/maps.err"
check "maps exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
grep -E 'pbid-workload$|libpbidwork\.so$' "$TMP/maps" | sed 's/^/# /'

# maps: PID START-END PGOFF PROT SAMPLES BUILD-ID SOURCE PATH
ids_ok() {  # ids_ok BASENAME EXPECTED-ID: every mapping of it has exactly that id
	awk -v name="$1" -v want="$2" '
		{ base = $8; sub(/.*\//, "", base) }
		base == name { seen++; if ($6 != want) bad++ }
		END { exit !(seen > 0 && bad == 0) }' "$TMP/maps"
}
check "maps: pbid-workload has build id $wl_id" ids_ok pbid-workload "$wl_id"
check "maps: libpbidwork.so has build id $lib_id" ids_ok libpbidwork.so "$lib_id"

sources=$(awk '{ base = $8; sub(/.*\//, "", base) }
	base == "pbid-workload" || base == "libpbidwork.so" { print $7 }' "$TMP/maps" | sort -u | tr '\n' ' ')
echo "# build-id source: $sources"

"$PB" buildid-list -i "$TMP/perf.data" >"$TMP/bidl" 2>"$TMP/bidl.err"
sed 's/^/# buildid-list: /' "$TMP/bidl" "$TMP/bidl.err"
check "buildid-list: pbid-workload $wl_id" grep -q "^$wl_id .*/pbid-workload\$" "$TMP/bidl"
check "buildid-list: libpbidwork.so $lib_id" grep -q "^$lib_id .*/libpbidwork\.so\$" "$TMP/bidl"

hits=$(awk '{ base = $8; sub(/.*\//, "", base) } base == "libpbidwork.so" { s += $5 } END { print s + 0 }' "$TMP/maps")
check "samples landed in libpbidwork.so ($hits)" [ "$hits" -gt 0 ]

UW=${4:-}
if [ -n "$UW" ]; then
	"$PB" record -q --call-graph dwarf -F 999 -o "$TMP/dwarf.data" -- "$UW" 600 \
		>/dev/null 2>"$TMP/dwarf.err"
	rc=$?
	sed 's/^/# record --call-graph dwarf: /' "$TMP/dwarf.err"
	check "record --call-graph dwarf exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	"$PB" report -i "$TMP/dwarf.data" --no-debuginfod --format folded >"$TMP/folded" 2>"$TMP/folded.err"
	"$PB" report -i "$TMP/dwarf.data" --no-debuginfod 2>&1 | grep "DWARF unwinding" | sed 's/^/# /'
	reach=$(awk '/unwind_hot/ { n += $NF; if ($0 ~ /;main;/) m += $NF } END { print m + 0, n + 0 }' "$TMP/folded")
	echo "# dwarf: hot samples reaching main, of all hot samples: $reach"
	check "dwarf: at least 95% of the hot samples unwind to main ($reach)" \
		awk -v r="${reach% *}" -v n="${reach#* }" 'BEGIN { exit !(n > 0 && r * 100 >= n * 95) }'

	"$PB" record -q -a -g -F 999 -o "$TMP/a.data" -- "$WL" 300 >/dev/null 2>"$TMP/a.err"
	rc=$?
	check "record -a -g -- CMD exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check "record -a -g -- CMD: other tasks than the command's are sampled" \
		sh -c "'$PB' script -i '$TMP/a.data' | awk '\$1 != \"pbid-workload\"' | grep -q ."
	"$PB" record -q -C 0 -F 999 -o "$TMP/c.data" -- "$WL" 300 >/dev/null 2>"$TMP/c.err"
	rc=$?
	check "record -C 0 -- CMD exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	"$WL" 5000 >/dev/null 2>&1 &
	p1=$!
	"$WL" 5000 >/dev/null 2>&1 &
	p2=$!
	sleep 1
	"$PB" record -q -p "$p1,$p2" -F 999 -o "$TMP/p.data" -- sleep 1 >/dev/null 2>"$TMP/p.err"
	rc=$?
	check "record -p A,B exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	"$PB" maps -i "$TMP/p.data" >"$TMP/p.maps" 2>/dev/null
	check "record -p A,B: both processes have samples" \
		awk -v a="$p1" -v b="$p2" '$1 == a && $5 > 0 { x = 1 } $1 == b && $5 > 0 { y = 1 } END { exit !(x && y) }' "$TMP/p.maps"
	"$PB" record -q -t "$p1,$p2" -F 999 -o "$TMP/t.data" -- sleep 1 >/dev/null 2>"$TMP/t.err"
	rc=$?
	check "record -t A,B exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	kill "$p1" "$p2" 2>/dev/null
	wait "$p1" "$p2" 2>/dev/null
	"$PB" record -q -e cpu-clock:u -e task-clock -o "$TMP/e.data" -- "$WL" 300 >/dev/null 2>"$TMP/e.err"
	rc=$?
	sed 's/^/# record -e: /' "$TMP/e.err"
	check "record -e cpu-clock:u -e task-clock exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check "report shows one section per event" \
		[ "$("$PB" report -i "$TMP/e.data" --no-debuginfod 2>/dev/null | grep -c "^# Samples:")" -eq 2 ]
fi

echo "1..$n"
[ "$failed" -eq 0 ]
