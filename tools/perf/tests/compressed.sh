#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compressed records (perf record -z) between perf-buildid and the real Linux perf. perf's -z
# files, of one process, of every CPU with callchains (-a -g) and in pipe mode, read by every
# command as their copies decompressed by perf (the same output); a corrupt and a truncated
# payload, exit 3 naming the compressed record's offset; `perf-buildid record -z` files and
# streams read by perf without a warning, and as perf decompresses them. Prints TAP; 77
# (skip) without perf or perf_event_open.
#
# Usage: compressed.sh PERF-BUILDID WORKLOAD WORKDIR
set -euo pipefail
PB=$1
WL=$2
W=$3
PERF=${PERF:-/usr/bin/perf}
LIB=$(dirname "$WL")/libpbidwork.so
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=perf-record.sh disable=SC1091 # beside this script
. "$(dirname "$0")/perf-record.sh"

if [ ! -x "$PERF" ]; then
	echo "1..0 # SKIP $PERF not installed"
	exit 77
fi
rm -rf "$W"
mkdir -p "$W"
cd "$W"

n=0 failed=0
check() {
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)) && echo "not ok $n - $d"; fi
}

if ! "$PB" record -q -o probe.data -F 99 -- true 2>probe.err; then
	echo "1..0 # SKIP perf_event_open unavailable: $(head -1 probe.err)"
	exit 77
fi
LIB_ID=$(readelf -n "$LIB" | awk '/Build ID:/ { print $3; exit }')

# count_compressed FILE: the PERF_RECORD_COMPRESSED (81) and COMPRESSED2 (83, perf 6.15 and
# later) records in FILE's data section (a file or a pipe-mode stream), so that a check cannot
# pass on a file perf wrote plainly.
count_compressed() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
off, end = 16, len(b)
if struct.unpack_from('<Q', b, 8)[0] == 104:
    off, size = struct.unpack_from('<QQ', b, 40)
    end = off + size
count = 0
while off + 8 <= end:
    t, _, s = struct.unpack_from('<IHH', b, off)
    count += t in (81, 83)
    off += s
print(count)
EOF
}

# damage IN OUT WHAT: OUT is IN with its first compressed record's zstd magic broken (corrupt)
# or, in a pipe-mode stream, its last compressed record cut to half its payload (truncated);
# prints that record's offset in hex, as the error names it.
damage() {
	python3 - "$@" <<'EOF'
import struct, sys
src, dst, what = sys.argv[1:]
b = bytearray(open(src, 'rb').read())
off, end = 16, len(b)
if struct.unpack_from('<Q', b, 8)[0] == 104:
    off, size = struct.unpack_from('<QQ', b, 40)
    end = off + size
found = []
while off + 8 <= end:
    t, _, s = struct.unpack_from('<IHH', b, off)
    if t in (81, 83):
        found.append((off, s, 8 if t == 81 else 16))  # COMPRESSED2: u64 data_size, then data
    off += s
if what == 'corrupt':
    at, _, hdr = found[0]
    b[at + hdr:at + hdr + 4] = b'\0\0\0\0'
else:
    at, s, hdr = found[-1]
    half = (hdr + (s - hdr) // 2) // 8 * 8
    struct.pack_into('<H', b, at + 6, half)
    if hdr == 16:
        struct.pack_into('<Q', b, at + 8, half - hdr)
    del b[at + half:at + s]
open(dst, 'wb').write(b)
print(hex(at))
EOF
}

# perf_plain_copy IN OUT: OUT holds IN's records as perf decompresses them, written plainly.
perf_plain_copy() { PERF=$PERF "$HERE/perf-decompress.sh" "$1" "$2"; }

# same_as_plain Z PLAIN WHAT: every command prints for Z what it prints for PLAIN (perf's
# decompressed copy, which must hold no compressed record), and exits 0. Z may be "-STREAM"
# for a pipe-mode stream on stdin.
same_as_plain() {
	local z=$1 plain=$2 what=$3 cmd out
	check "$what: perf's copy holds no compressed record" [ "$(count_compressed "$plain")" -eq 0 ]
	for cmd in buildid-list maps script "report --stdio --no-debuginfod"; do
		out=${cmd%% *}
		# shellcheck disable=SC2086 # cmd is a command line
		if [ "${z:0:1}" = - ]; then
			"$PB" $cmd -i - <"${z:1}" >"$out.z" 2>&1 || echo "exit $?" >>"$out.z"
		else
			"$PB" $cmd -i "$z" >"$out.z" 2>&1 || echo "exit $?" >>"$out.z"
		fi
		# shellcheck disable=SC2086
		"$PB" $cmd -i "$plain" >"$out.plain" 2>&1 || echo "exit $?" >>"$out.plain"
		check "$cmd: $what reads as perf's decompressed copy" diff -u "$out.plain" "$out.z"
	done
	check "buildid-list ($what): the library with readelf's id" grep -qx "$LIB_ID $LIB" buildid-list.z
	local rc=0
	if [ "${z:0:1}" = - ]; then
		"$PB" dump -i - <"${z:1}" >dump.z 2>&1 || rc=$?
	else
		"$PB" dump -i "$z" >dump.z 2>&1 || rc=$?
	fi
	check "dump: $what, exit 0" [ "$rc" -eq 0 ]
}

# --- 1. perf's -z files and stream, read by us.
perf_record -q -z -N --buildid-mmap -o z.data -- "$WL" 200 >/dev/null 2>&1
perf_plain_copy z.data z-plain.data
check "perf -z: the file has compressed records ($(count_compressed z.data))" \
	[ "$(count_compressed z.data)" -gt 0 ]
same_as_plain z.data z-plain.data "perf -z"

perf_record -q -z -N --buildid-mmap -a -g -o za.data -- "$WL" 200 >/dev/null 2>&1
perf_plain_copy za.data za-plain.data
check "perf -z -a -g: the file has compressed records ($(count_compressed za.data))" \
	[ "$(count_compressed za.data)" -gt 1 ]
same_as_plain za.data za-plain.data "perf -z -a -g"

"$PERF" record -q -z -N --buildid-mmap -o - -- "$WL" 200 >zp.data 2>/dev/null
perf_plain_copy zp.data zp-plain.data
check "perf -z -o -: the stream has compressed records ($(count_compressed zp.data))" \
	[ "$(count_compressed zp.data)" -gt 0 ]
same_as_plain -zp.data zp-plain.data "perf -z -o - on stdin"

# --- 2. Damaged payloads: exit 3, one line naming the compressed record.
at=$(damage za.data corrupt.data corrupt)
for cmd in buildid-list maps script dump report; do
	rc=0
	"$PB" $cmd -i corrupt.data >corrupt.out 2>&1 || rc=$?
	check "$cmd, corrupt payload: exit 3 naming offset $at" \
		bash -c "[ $rc -eq 3 ] && grep -q 'data.compressed at offset $at: corrupt compressed payload' corrupt.out && [ \$(wc -l <corrupt.out) -eq 1 ]"
done
at=$(damage zp.data truncated.data truncated)
rc=0
"$PB" buildid-list -i - <truncated.data >truncated.out 2>&1 || rc=$?
check "buildid-list, truncated payload: exit 3 naming offset $at" \
	bash -c "[ $rc -eq 3 ] && grep -q 'data.compressed at offset $at: .*truncated' truncated.out"
sed 's/^/# /' truncated.out

# --- 3. Ours, read by perf without a warning.
perf_quiet() {  # perf_quiet NAME PERF-ARGS...: perf prints nothing on stderr
	local name=$1 rc=0
	shift
	"$PERF" "$@" >"$name.out" 2>"$name.err" || rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$name.err" ]; then
		echo "# perf $*: rc=$rc"
		sed 's/^/#   /' "$name.err" | head -5
		return 1
	fi
}
"$PB" record -q -z -g -F 4000 -o ours.data -- "$WL" 300 >/dev/null
check "record -z: the file has compressed records ($(count_compressed ours.data))" \
	[ "$(count_compressed ours.data)" -gt 1 ]
for args in "report --stdio" "script" "buildid-list"; do
	# shellcheck disable=SC2086
	check "perf $args reads our -z file without warnings" perf_quiet "o-${args%% *}" $args -i ours.data
done
check "perf buildid-list (our -z file): the library with readelf's id" \
	grep -qx "$LIB_ID $LIB" o-buildid-list.out
check "perf report (our -z file): samples in the library" grep -q "libpbidwork.so" o-report.out
check "perf report --header-only: HEADER_COMPRESSED as perf writes it" \
	bash -c "'$PERF' report --header-only -i ours.data 2>/dev/null | grep -q '^# compressed : Zstd, level = 1, ratio = [1-9]'"
perf_plain_copy ours.data ours-plain.data
check "our -z file: perf's copy holds no compressed record" \
	[ "$(count_compressed ours-plain.data)" -eq 0 ]
"$PB" script -i ours.data >o-ours.script
"$PB" script -i ours-plain.data >o-plain.script
check "our script reads our -z file as perf decompresses it" cmp -s o-ours.script o-plain.script

# A second long enough for several drains (each a compressed record) on a loaded machine too.
"$PB" record -q --compression-level=9 -g -F 4000 -o - -- "$WL" 1000 >ours-pipe.data 2>/dev/null
check "record -z -o -: the stream has compressed records" [ "$(count_compressed ours-pipe.data)" -gt 1 ]
check "perf report reads our -z stream on stdin without warnings" \
	perf_quiet o-pipe-report report --stdio -i - <ours-pipe.data
check "perf report (our -z stream): samples in the library" grep -q "libpbidwork.so" o-pipe-report.out
"$PB" report --stdio --no-debuginfod -i - <ours-pipe.data >o-pipe-ours.out 2>&1
check "our report reads our -z stream on stdin" grep -q "libpbidwork.so" o-pipe-ours.out
perf_plain_copy ours-pipe.data ours-pipe-plain.data
"$PB" script -i - <ours-pipe.data >o-ours-pipe.script
"$PB" script -i ours-pipe-plain.data >o-plain-pipe.script
check "our script reads our -z stream as perf decompresses it" \
	cmp -s o-ours-pipe.script o-plain-pipe.script

echo "1..$n"
[ "$failed" -eq 0 ]
