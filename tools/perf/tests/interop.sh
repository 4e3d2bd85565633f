#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interop of perf-buildid with the real Linux perf (Debian linux-perf, /usr/bin/perf), readelf
# and the running kernel. Prints TAP; exits 1 if any check fails, 77 (skip) when perf or
# perf_event_open are unavailable.
#
# Usage: interop.sh PERF-BUILDID WORKLOAD WORKDIR
set -u
PB=$1
WL=$2
W=$3
PERF=${PERF:-/usr/bin/perf}
LIB=$(dirname "$WL")/libpbidwork.so
# shellcheck source=perf-record.sh disable=SC1091 # beside this script
. "$(dirname "$0")/perf-record.sh"

if [ ! -x "$PERF" ]; then
	echo "1..0 # SKIP $PERF not installed"
	exit 77
fi
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
readelf_id() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }
# perf must print nothing on stderr: no warning, no error.
perf_quiet() {  # perf_quiet NAME FILE PERF-ARGS...
	local name=$1 file=$2
	shift 2
	"$PERF" "$@" -i "$file" >"$name.out" 2>"$name.all"
	local rc=$?
	# PERF_EXPLAINED: a pattern of warnings that are known and documented for this check.
	if [ -n "${PERF_EXPLAINED:-}" ]; then
		grep -E "$PERF_EXPLAINED" "$name.all" | sed 's/^/# explained: /'
		grep -vE "$PERF_EXPLAINED" "$name.all" >"$name.err" || true
	else
		cp "$name.all" "$name.err"
	fi
	if [ $rc -ne 0 ] || [ -s "$name.err" ]; then
		echo "# perf $* -i $file: rc=$rc"
		sed 's/^/#   /' "$name.err" | head -5
		return 1
	fi
	return 0
}

WL_ID=$(readelf_id "$WL")
LIB_ID=$(readelf_id "$LIB")
echo "# readelf: $WL_ID $WL"
echo "# readelf: $LIB_ID $LIB"
echo "# kernel $(uname -r), $("$PERF" --version)"

# Probe once: some CI containers forbid perf_event_open.
if ! "$PB" record -q -o probe.data -F 99 -- true 2>probe.err; then
	echo "1..0 # SKIP perf_event_open unavailable: $(head -1 probe.err)"
	exit 77
fi

# perf_reads FILE PREFIX WHAT: perf reads FILE without warnings (outputs in PREFIX-*.out), and
# its buildid-list gives the workload and the library with readelf's ids.
perf_reads() {
	local file=$1 prefix=$2 what=$3 args
	for args in "report --stdio" "script --show-mmap-events" "buildid-list" "report -D"; do
		# shellcheck disable=SC2086 # args is a perf command line
		check "perf $args reads $what without warnings" perf_quiet "$prefix-${args// /_}" "$file" $args
	done
	check "perf buildid-list ($what): workload id equals readelf" \
		grep -qx "$WL_ID $WL" "$prefix-buildid-list.out"
	check "perf buildid-list ($what): library id equals readelf" \
		grep -qx "$LIB_ID $LIB" "$prefix-buildid-list.out"
}

# --- 1. Our recording (kernel path), read by perf.
"$PB" record -F 999 -o ours.data -- "$WL" 400 >/dev/null 2>record.err
check "record (kernel path) exits 0" [ $? -eq 0 ]
sed 's/^/# /' record.err
perf_reads ours.data k "our file"
check "perf script: MMAP2 of the workload carries the readelf id" \
	grep -q "<$WL_ID>\]: r-xp $WL\$" k-script_--show-mmap-events.out
check "perf script: MMAP2 of the library carries the readelf id" \
	grep -q "<$LIB_ID>\]: r-xp $LIB\$" k-script_--show-mmap-events.out
check "perf report attributes samples to the library" \
	grep -q "libpbidwork.so" k-report_--stdio.out
# perf inject writes every feature bit of its input, looking each one up in a table of the
# features it knows, with no bound: perf 6.1, 6.12 and 7.2 crash (SIGSEGV) on our own sections'
# bits (192, 193), to a file or a pipe, though their readers skip those bits as the format
# says. The workaround the manual gives: a copy with our bits cleared (their sections are the
# last ones, so the others keep their places), which perf injects with the same ids.
if grep -q '^# feature 19[23]:' <("$PB" dump --no-hex -i ours.data 2>/dev/null); then
	"$PERF" inject -i ours.data -o inj.data >/dev/null 2>&1
	echo "# perf inject on our file with our sections: exit $? (139: perf's crash)"
	python3 - ours.data noown.data <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
words = list(struct.unpack_from('<4Q', b, 72))
words[3] &= ~0x3  # bits 192 and 193
struct.pack_into('<4Q', b, 72, *words)
open(sys.argv[2], 'wb').write(b)
EOF
	"$PERF" inject -b -i noown.data -o inj.data >/dev/null 2>inj.err
	check "perf inject -b copies our file once our own feature bits are cleared" [ $? -eq 0 ]
	check "... and perf buildid-list reads the library's id from the copy" \
		grep -qx "$LIB_ID $LIB" <("$PERF" buildid-list -i inj.data 2>/dev/null)
fi
"$PB" maps -i ours.data >k-maps.out
if command -v python3 >/dev/null; then
	check "our maps --json is valid JSON with the library's id" python3 -c "
import json, sys
maps = json.load(open(sys.argv[1]))
assert any(m['path'] == sys.argv[2] and m['build_id'] == sys.argv[3] and m['source'] == 'kernel'
           for m in maps)" <("$PB" maps --json -i ours.data) "$LIB" "$LIB_ID"
fi
check "our maps: library id from the kernel record" \
	grep -q " $LIB_ID kernel $LIB\$" k-maps.out

# --- 2. Fallback path (no attr.build_id): ids read from /proc/PID/map_files.
"$PB" record -F 999 --no-buildid-attr -o fb.data -- "$WL" 400 >/dev/null 2>fb.err
check "record --no-buildid-attr exits 0" [ $? -eq 0 ]
check "record says once that it falls back" [ "$(grep -c 'reading build ids from /proc' fb.err)" -eq 1 ]
perf_reads fb.data f "the fallback file"
"$PB" maps -i fb.data >f-maps.out
check "our maps (fallback): library id read from the file" \
	grep -q " $LIB_ID file $LIB\$" f-maps.out
check "our maps (fallback): no mapping claims a kernel-record id" \
	bash -c "! grep -q ' kernel /' f-maps.out"

# --- 3. Files written by perf, read by us. -N where perf would write its build-id cache
# (~/.debug): other tests may run perf beside this one, and perf 6.1 can abort on that.
perf_record -q --buildid-mmap -F 999 -o perf-bm.data -- "$WL" 400 >/dev/null 2>&1
check "perf record --buildid-mmap exits 0" [ $? -eq 0 ]
# sample_id_all repeats TID, TIME, CPU and the ids in every MMAP2: each one perf does not record
# is ring buffer space an mmap storm takes from us and not from perf.
sample_fields() { "$PERF" evlist -v -i "$1" 2>/dev/null | grep -o 'sample_type: [A-Z_|]*' | head -1 |
	sed 's/^sample_type: //' | tr '|' '\n' | sort; }
sample_fields perf-bm.data >st.perf
sample_fields ours.data >st.ours
check "record samples no field that perf record leaves out for the same command ($(paste -sd'|' st.ours))" \
	bash -c "[ -s st.ours ] && [ -z \"\$(comm -23 st.ours st.perf)\" ]"
"$PB" dump --no-hex -i perf-bm.data >bm-dump.out
check "our dump prints no cpu or id that perf's samples do not carry" \
	bash -c "grep -q 'PERF_RECORD_SAMPLE' bm-dump.out && ! grep -Eq ' (cpu|id): ' bm-dump.out"
# perf 6.1 also prints DSOs that were hit but have no id, with a blank id (the vdso under a
# temporary file name of perf's own); perf-buildid leaves those out. The lists could also
# differ after an exec, whose old mappings perf keeps, but only through a user sample outside
# the new program's mappings, which takes lost MMAP2 records.
"$PERF" buildid-list -i perf-bm.data 2>/dev/null | grep -E '^[0-9a-f]+ ' >bm.perf
"$PB" buildid-list -i perf-bm.data >bm.ours
# As sets: perf 6.12 lists its DSOs sorted by name, 6.1 in the order it met them.
check "buildid-list on a --buildid-mmap file equals perf's" diff -u <(sort bm.perf) <(sort bm.ours)
check "... and is not empty" [ -s bm.ours ]
check "... and lists the library with the readelf id" grep -qx "$LIB_ID $LIB" bm.ours
perf_record -q -N -F 999 -o perf-def.data -- "$WL" 300 >/dev/null 2>&1
"$PERF" buildid-list -i perf-def.data 2>/dev/null | grep -E '^[0-9a-f]+ ' >def.perf
"$PB" buildid-list -i perf-def.data >def.ours
check "buildid-list on a default-mode perf file equals perf's" diff -u <(sort def.perf) <(sort def.ours)
perf_record -q -N -g -F 999 -o perf-g.data -- "$WL" 200 >/dev/null 2>&1
check "our script reads a perf -g file" bash -c "'$PB' script -i perf-g.data >/dev/null"
check "our dump reads a perf file" bash -c "'$PB' dump -i perf-bm.data >/dev/null"
"$PERF" record -q -N -F 999 -o - -- "$WL" 200 >perf-pipe.data 2>/dev/null
"$PB" maps -i perf-pipe.data >p-maps.out 2>p-maps.err
check "our maps reads a perf pipe-mode file" grep -q " r-xp .* $LIB\$" p-maps.out
"$PERF" record -q --buildid-mmap -F 999 -o - -- "$WL" 200 2>/dev/null | "$PB" maps -i - >s-maps.out
check "our maps reads a perf --buildid-mmap pipe on stdin, with the library's id" \
	grep -q " $LIB_ID kernel $LIB\$" s-maps.out

# --- 4. Attach to a running process: synthesized MMAP2 records.
"$WL" 3000 >/dev/null &
wpid=$!
sleep 0.3
"$PB" record -F 999 -o attach.data -p $wpid >/dev/null 2>attach.err &
rpid=$!
sleep 0.8
kill -INT $rpid
wait $rpid
check "record -p stopped by SIGINT exits 0" [ $? -eq 0 ]
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null
"$PB" maps -i attach.data >a-maps.out
check "record -p: library id synthesized" grep -q " $LIB_ID synthesized $LIB\$" a-maps.out
check "perf report reads the attach file without warnings" perf_quiet a-report attach.data report --stdio
check "perf buildid-list (attach): library id" grep -qx "$LIB_ID $LIB" <("$PERF" buildid-list -i attach.data)

# --- 5. System-wide (needs root or perf_event_paranoid <= 0).
if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
# SIGTERM finishes a valid file.
"$PB" record -a -F 99 -o sys.data >/dev/null 2>sys.err &
rpid=$!
sleep 0.5  # let it open the events: a workload started earlier is only synthesized if seen
"$WL" 300 >/dev/null
kill -TERM $rpid
wait $rpid
check "record -a stopped by SIGTERM exits 0" [ $? -eq 0 ]
check "perf report reads the system-wide file without warnings" perf_quiet s-report sys.data report --stdio
check "our buildid-list reads it" bash -c "'$PB' buildid-list -i sys.data | grep -q '$LIB_ID'"
check "record -a samples the CPU, as perf -a does" grep -qx CPU <(sample_fields sys.data)
check "our dump prints the CPU of a system-wide sample" \
	grep -q 'PERF_RECORD_SAMPLE.* cpu: [0-9]' <("$PB" dump --no-hex -i sys.data)

perf_quiet_but_nrcpus() { PERF_EXPLAINED=HEADER_NRCPUS perf_quiet "$@"; }
# --- 5b. SIGKILL: the checkpointed header still covers what was recorded.
"$PB" record -a -F 99 -o killed.data >/dev/null 2>&1 &
rpid=$!
sleep 0.5
"$WL" 1500 >/dev/null
kill -KILL $rpid
wait $rpid 2>/dev/null
# The checkpointed header has no feature sections (they follow the data, which goes on): perf
# 7.x warns that HEADER_NRCPUS is missing and reads on (Documentation/compatibility.md).
check "record -a killed by SIGKILL: perf report reads the file without warnings (but NRCPUS)" \
	perf_quiet_but_nrcpus x-report killed.data report --stdio
check "... and it has the library's samples" grep -q "libpbidwork.so" x-report.out

else
	echo "# SKIP system-wide tests: not root and perf_event_paranoid > 0"
fi

# --- 6. Truncated and corrupt files: one-line error naming field and offset, exit 3.
size=$(stat -c %s ours.data)
for cut in 0 7 64 103 200 $((size / 2)) $((size - 1)); do
	head -c $cut ours.data >cut.data
	"$PB" buildid-list -i cut.data >/dev/null 2>cut.err
	rc=$?
	check "truncated to $cut bytes: exit 3, one line ($(head -1 cut.err))" \
		bash -c "[ $rc -eq 3 ] && [ \$(wc -l <cut.err) -eq 1 ] && grep -q 'perf-buildid buildid-list: .*cut.data' cut.err"
done
cp ours.data bad.data
printf 'XXXXXXXX' | dd of=bad.data conv=notrunc 2>/dev/null
"$PB" maps -i bad.data >/dev/null 2>bad.err
rc=$?
check "bad magic: exit 3 naming header.magic" bash -c "[ $rc -eq 3 ] && grep -q 'header.magic at offset 0' bad.err"
cp ours.data bad.data
printf '\xff\xff\xff\x7f' | dd of=bad.data bs=1 seek=40 conv=notrunc 2>/dev/null
"$PB" script -i bad.data >/dev/null 2>bad.err
rc=$?
check "data offset beyond the file: exit 3 naming header.data ($(cat bad.err))" \
	bash -c "[ $rc -eq 3 ] && grep -q 'header.data at offset 0x28' bad.err"
"$PB" buildid-list -i does-not-exist.data 2>missing.err
check "missing file: exit 3" [ $? -eq 3 ]

# --- 7. Command line: man-page help on every command, exit 2 on misuse.
for cmd in record buildid-list maps script dump; do
	"$PB" $cmd --help >help.out 2>&1
	rc=$?
	check "$cmd --help: exit 0 with NAME, SYNOPSIS, OPTIONS, EXIT STATUS" \
		bash -c "[ $rc -eq 0 ] && grep -q '^NAME' help.out && grep -q '^SYNOPSIS' help.out &&
			grep -q '^OPTIONS' help.out && grep -q '^EXIT STATUS' help.out"
	"$PB" $cmd --no-such-option >/dev/null 2>&1
	rc=$?
	check "$cmd --no-such-option: exit 2" [ $rc -eq 2 ]
done
"$PB" record -a -p 1 >/dev/null 2>&1
rc=$?
check "record -a -p: exit 2" [ $rc -eq 2 ]
"$PB" no-such-command >/dev/null 2>&1
rc=$?
check "unknown command: exit 2" [ $rc -eq 2 ]
"$PB" record -o nx.data -- /nonexistent/program >/dev/null 2>nx.err
rc=$?
check "record of a missing program: exit 1, one line, no file left" \
	bash -c "[ $rc -eq 1 ] && [ \$(wc -l <nx.err) -eq 1 ] && [ ! -e nx.data ]"

echo "1..$n"
[ $failed -eq 0 ]
