#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the lab VM (busybox sh, no readelf): Debian 11's perf with the tools series
# (perf-5.10) against the kernel, and interop with perf 6.1 and perf-buildid. Prints TAP;
# exits non-zero when a check fails.
#
# Usage: perf-5.10-guest.sh buildid|pristine DIR
#   DIR holds perf-5.10, perf-6.1, perf-buildid, pbid-workload, libpbidwork.so and
#   pbid-workload.buildids (the ids readelf saw on the host).
#   buildid:  the kernel has perf_event_attr::build_id (5.10-buildid);
#   pristine: it has not (5.10): --buildid-mmap must be refused.

mode=$1
D=$2
P510=$D/perf-5.10
P61=$D/perf-6.1
PB=$D/perf-buildid
WL=$D/pbid-workload
LIB=$D/libpbidwork.so
T=${TMPDIR:-/tmp}/perf-5.10-guest.$$
mkdir -p "$T" || exit 1
cd "$T" || exit 1
# perf's build id cache and config live under HOME
export HOME="$T"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() {  # check DESCRIPTION COMMAND...
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# show FILE PREFIX PATTERN: quote the lines of FILE that match PATTERN in the TAP output
show() { grep -E "$3" "$1" | head -8 | sed "s|^|# $2: |"; }
# ids FILE: the "<id> <path>" lines of a buildid-list output, sorted
ids() { grep -E '^[0-9a-f]{2,40} /' "$1" | sort; }

wl_id=$(awk '$2 == "pbid-workload" { print $1 }' "$WL.buildids")
lib_id=$(awk '$2 == "libpbidwork.so" { print $1 }' "$WL.buildids")
echo "TAP version 13"
echo "# kernel $(uname -r); $("$P510" --version); $("$P61" --version)"
echo "# readelf on the host: $wl_id pbid-workload, $lib_id libpbidwork.so"
if [ -z "$wl_id" ] || [ -z "$lib_id" ]; then
	echo "not ok 1 - expected ids present"
	exit 1
fi

if [ "$mode" = pristine ]; then
	echo "keep me" >perf.data
	"$P510" record --buildid-mmap -o perf.data -- "$WL" 100 >rec.out 2>rec.err
	rc=$?
	sed 's/^/# record --buildid-mmap: /' rec.err
	check "record --buildid-mmap refuses (rc=$rc)" [ "$rc" -ne 0 ]
	check "... saying the kernel lacks perf_event_attr::build_id" \
		grep -q 'kernel does not support perf_event_attr::build_id' rec.err
	check "... and leaves the existing perf.data alone" \
		sh -c '[ "$(cat perf.data)" = "keep me" ] && [ ! -e perf.data.old ]'
	# Without the option, Debian 11's perf works as it always did on 5.10: build ids
	# come from the post-processing pass into the header's table.
	"$P510" record -q -F 999 -o plain.data -- "$WL" 300 >/dev/null 2>plain.err
	rc=$?
	check "record without --buildid-mmap still works (rc=$rc)" [ "$rc" -eq 0 ]
	"$P510" buildid-list -i plain.data >plain.bid 2>&1
	show plain.bid buildid-list 'pbid'
	check "buildid-list (post-processing pass): workload id equals readelf" \
		grep -qx "$wl_id $WL" plain.bid
	check "buildid-list (post-processing pass): library id equals readelf" \
		grep -qx "$lib_id $LIB" plain.bid
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
fi

# --- perf-5.10 record --buildid-mmap on a workload
"$P510" record --buildid-mmap -F 999 -o a.data -- "$WL" 400 >rec.out 2>rec.err
rc=$?
sed 's/^/# record: /' rec.err
check "perf-5.10 record --buildid-mmap exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
"$P510" evlist -v -i a.data >evlist.out 2>&1
show evlist.out "evlist -v" 'build_id'
check "the events asked the kernel for build ids (attr.build_id)" \
	grep -Eq 'build_id(:| =) 1' evlist.out
"$P510" report --header-only -i a.data >header.out 2>&1
show header.out "report --header-only" 'missing features'
check "no post-processing pass: the header has no build id table" \
	grep -Eq '^# missing features:.* BUILD_ID' header.out

"$P510" buildid-list -i a.data >bid.510 2>bid.err
show bid.510 "perf-5.10 buildid-list" 'pbid'
check "buildid-list: workload id equals readelf" grep -qx "$wl_id $WL" bid.510
check "buildid-list: library id equals readelf" grep -qx "$lib_id $LIB" bid.510

"$P510" report --stdio -i a.data >report.out 2>report.err
show report.out "report --stdio" 'pbid'
check "report --stdio names the library's symbol pbid_work_spin" \
	grep -Eq 'libpbidwork\.so +\[\.\] pbid_work_spin' report.out
check "report --stdio prints nothing on stderr" [ ! -s report.err ]

"$P510" script --show-mmap-events -i a.data >script.out 2>&1
show script.out "script --show-mmap-events" 'PERF_RECORD_MMAP2.*pbid'
check "script --show-mmap-events: the workload's MMAP2 carries the readelf id" \
	grep -q "<$wl_id>\]: r-xp $WL\$" script.out
check "script --show-mmap-events: the library's MMAP2 carries the readelf id" \
	grep -q "<$lib_id>\]: r-xp $LIB\$" script.out

"$P510" report -D -i a.data >dump.out 2>&1
show dump.out "report -D" "PERF_RECORD_MMAP2.*libpbidwork"
check "report -D: the library's MMAP2 carries the readelf id" \
	grep -q "PERF_RECORD_MMAP2 .*<$lib_id>\]: r-xp $LIB\$" dump.out

# A process that runs before perf starts: its mappings are synthesized from
# /proc/PID/maps, and must carry the ids too. It must outlive the session, which ends
# with `sleep 1`: perf stops early when the process it follows exits, kills the
# `sleep` and exits with 143. Under TCG on a busy host, perf can take seconds to
# start, so the process runs far longer than needed and is killed afterwards.
"$WL" 60000 >/dev/null &
wpid=$!
sleep 1
"$P510" record --buildid-mmap -F 999 -p "$wpid" -o attach.data -- sleep 1 >/dev/null 2>attach.err
rc=$?
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
check "record --buildid-mmap -p PID exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
"$P510" script --show-mmap-events -i attach.data >attach.out 2>&1
show attach.out "script (attached)" 'PERF_RECORD_MMAP2.*libpbidwork'
check "synthesized MMAP2 of the running library carries the readelf id" \
	grep -q "<$lib_id>\]: r-xp $LIB\$" attach.out
"$P510" buildid-list -i attach.data >attach.bid 2>&1
check "buildid-list (attached): library id equals readelf" grep -qx "$lib_id $LIB" attach.bid

# perf inject -b turns the records' ids into a build id table.
"$P510" inject -b -i a.data -o injected.data 2>inject.err
rc=$?
check "inject -b exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
"$P510" report --header-only -i injected.data >inj-header.out 2>&1
"$P510" buildid-list -i injected.data >inj.bid 2>&1
check "inject -b: a build id table is written" \
	sh -c '! grep -Eq "^# missing features:.* BUILD_ID" inj-header.out'
check "inject -b: the table has the library id from the record" grep -qx "$lib_id $LIB" inj.bid

# annotate opens the library by the id of its record and disassembles it with objdump
"$P510" annotate --stdio -i a.data pbid_work_spin >annotate.out 2>annotate.err
show annotate.out annotate 'Disassembly of'
check "annotate disassembles pbid_work_spin from the library" \
	grep -q 'Disassembly of libpbidwork\.so' annotate.out

# --- interop: perf 6.1 and perf-buildid read perf-5.10's file
"$P61" buildid-list -i a.data >bid.61 2>&1
show bid.61 "perf 6.1 buildid-list" 'pbid'
check "perf 6.1 buildid-list: workload and library ids equal readelf" \
	sh -c "grep -qx '$wl_id $WL' bid.61 && grep -qx '$lib_id $LIB' bid.61"
ids bid.510 >ids.510
ids bid.61 >ids.61
check "perf 6.1 and perf-5.10 list the same ids for perf-5.10's file" diff ids.61 ids.510
"$P61" script --show-mmap-events -i a.data >script.61 2>&1
check "perf 6.1 script shows the library's id in perf-5.10's MMAP2" \
	grep -q "<$lib_id>\]: r-xp $LIB\$" script.61
"$PB" buildid-list -i a.data >bid.pb 2>bid.pb.err
sed 's/^/# perf-buildid buildid-list: /' bid.pb.err
show bid.pb "perf-buildid buildid-list" 'pbid'
ids bid.pb >ids.pb
check "perf-buildid buildid-list: workload and library ids equal readelf" \
	sh -c "grep -qx '$wl_id $WL' bid.pb && grep -qx '$lib_id $LIB' bid.pb"
check "perf-buildid and perf-5.10 list the same ids for perf-5.10's file" diff ids.pb ids.510
"$PB" maps -i a.data >maps.pb 2>&1
check "perf-buildid maps: the library's id came from the kernel record" \
	grep -q " $lib_id kernel $LIB\$" maps.pb

# --- interop: perf-5.10 reads perf 6.1's and perf-buildid's files
"$P61" record -q --buildid-mmap -F 999 -o b.data -- "$WL" 300 >/dev/null 2>b.err
rc=$?
check "perf 6.1 record --buildid-mmap exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
"$PB" record -q -F 999 -o c.data -- "$WL" 300 >/dev/null 2>c.err
rc=$?
check "perf-buildid record exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
for f in b c; do
	who="perf 6.1"
	[ "$f" = c ] && who=perf-buildid
	"$P510" buildid-list -i $f.data >$f.bid 2>&1
	show $f.bid "perf-5.10 buildid-list ($who's file)" 'pbid'
	check "perf-5.10 buildid-list of $who's file: ids equal readelf" \
		sh -c "grep -qx '$wl_id $WL' $f.bid && grep -qx '$lib_id $LIB' $f.bid"
	"$P510" script --show-mmap-events -i $f.data >$f.script 2>&1
	show $f.script "perf-5.10 script ($who's file)" 'PERF_RECORD_MMAP2.*libpbidwork'
	check "perf-5.10 script of $who's file shows the library's id" \
		grep -q "<$lib_id>\]: r-xp $LIB\$" $f.script
	"$P510" report --stdio -i $f.data >$f.report 2>$f.report.err
	check "perf-5.10 report of $who's file names pbid_work_spin" \
		grep -Eq 'libpbidwork\.so +\[\.\] pbid_work_spin' $f.report
	# Newer perfs write record types 5.10 does not know (PERF_RECORD_FINISHED_INIT):
	# they are skipped, and the report says so instead of leaving them out silently.
	show $f.report.err "perf-5.10 report ($who's file), stderr" 'unknown events'
	check "perf-5.10 report of $who's file says it skipped records of unknown types" \
		grep -Eq '^Found [1-9][0-9]* unknown events' $f.report.err
done
"$P61" buildid-list -i b.data >b.bid61 2>&1
ids b.bid61 >ids.b61
ids b.bid >ids.b510
check "perf-5.10 and perf 6.1 list the same ids for perf 6.1's file" diff ids.b61 ids.b510

# The host checks how this file reads when its attrs do not ask for build ids.
[ -n "${LAB_BLOCK_DIR:-}" ] && cp a.data "$LAB_BLOCK_DIR/a.data"

echo "1..$n"
[ "$failed" -eq 0 ]
