#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# hotspot.sh PERF-BUILDID WORKLOAD WORKDIR: hotspot's reader, perfparser (Debian's hotspot
# package), on perf-buildid's files: default, -g, --call-graph dwarf, -a -g, pipe mode on
# stdin, and perf's own file beside them. perfparser --print-stats must exit 0 and count the
# samples, the mappings and the rounds that `perf-buildid dump` shows in the same file (its
# rounds are the FINISHED_ROUND records plus the final flush). Prints TAP; 77 (skip) without
# perfparser, perf or perf_event_open.
set -euo pipefail
PB=$1
WL=$2
W=$3
PERF=${PERF:-/usr/bin/perf}
PP=${PERFPARSER:-/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libexec/hotspot-perfparser}
for tool in "$PP" "$PERF"; do
	[ -x "$tool" ] || { echo "1..0 # SKIP $tool not installed (Debian's hotspot, linux-perf)"; exit 77; }
done
rm -rf "$W"
mkdir -p "$W"
cd "$W"
if ! "$PB" record -q -o probe.data -F 99 -- true 2>probe.err; then
	echo "1..0 # SKIP perf_event_open unavailable: $(head -1 probe.err)"
	exit 77
fi

n=0 failed=0
# ours FILE: "samples mmaps rounds" as perf-buildid dump counts them.
ours() {
	"$PB" dump -i "$1" | awk '
		/ PERF_RECORD_SAMPLE\(/ { s++ } / PERF_RECORD_MMAP2? / { m++ }
		/ PERF_RECORD_FINISHED_ROUND$/ { r++ }
		END { print s + 0, m + 0, r + 1 }'
}
# theirs STATS: "samples mmaps rounds" from perfparser --print-stats output.
theirs() {
	awk -F': ' '$1 == "samples" { s = $2 } $1 == "mmaps" { m = $2 } $1 == "rounds" { r = $2 }
		END { print s + 0, m + 0, r + 0 }' "$1"
}
# compare WHAT FILE [STATS]: perfparser on FILE (or its STATS already taken) against dump.
compare() {
	local what=$1 file=$2 stats=${3:-} want got rc=0
	if [ -z "$stats" ]; then
		stats=$file.stats
		"$PP" --input "$file" --print-stats >"$stats" 2>&1 || rc=$?
	fi
	want=$(ours "$file")
	got=$(theirs "$stats")
	n=$((n + 1))
	if [ "$rc" = 0 ] && [ "$want" = "$got" ] && [ "${want%% *}" -gt 0 ]; then
		echo "ok $n - $what: perfparser counts samples, mmaps, rounds $got, as dump does"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what: perfparser exit $rc, counts $got; dump: $want"
		sed 's/^/#   /' "$stats" | head -20
	fi
}

"$PB" record -q -o default.data -- "$WL" >/dev/null
compare "perf-buildid record" default.data
"$PB" record -q -g -o g.data -- "$WL" >/dev/null
compare "perf-buildid record -g" g.data
"$PB" record -q --call-graph dwarf -o dwarf.data -- "$WL" >/dev/null
compare "perf-buildid record --call-graph dwarf" dwarf.data
"$PB" record -q -a -g -o system.data -- "$WL" >/dev/null
compare "perf-buildid record -a -g" system.data
rc=0
"$PB" record -q -o - -- "$WL" 2>/dev/null | tee pipe.data | "$PP" --print-stats >pipe.stats 2>&1 ||
	rc=$?
[ "$rc" = 0 ] || echo "exit $rc" >>pipe.stats
compare "perf-buildid record -o - (pipe mode), perfparser on stdin" pipe.data pipe.stats
"$PERF" record -q -N --buildid-mmap -o perf.data -- "$WL" >/dev/null 2>&1
compare "perf record --buildid-mmap (perf's own file, beside ours)" perf.data

echo "1..$n"
[ "$failed" = 0 ]
