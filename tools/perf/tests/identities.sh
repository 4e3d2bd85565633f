#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mapping identities other than the GNU build ID, on the host: identities/prepare.sh builds a
# Go program linked by Go's own linker and C programs stripped of their GNU note, with what
# their identities must be; identities/check.sh records them and checks maps, script, the
# coverage summary and the replaced file (the same script runs in the lab's guests, from
# kernel/scripts/vm-perf.sh). Here also: the notes as readelf sees them, the pprof mapping,
# pipe mode, and the hash's documented limit. Prints TAP; 77 (skip) without go or
# perf_event_open.
#
# Usage: identities.sh PERF-BUILDID WORKDIR
set -euo pipefail
. "$(dirname "$0")/util/tap.sh"
PB=$1
W=$2
SRC=$(cd "$(dirname "$0")/identities" && pwd)

command -v go >/dev/null || { echo "1..0 # SKIP go not installed"; exit 77; }
rm -rf "$W"
mkdir -p "$W"
"$SRC/prepare.sh" "$W"
# shellcheck source=/dev/null
. "$W/expected"
cd "$W"


echo "TAP version 13"
check "the Go program has no GNU build-ID note" bash -c "! readelf -n '$W/gospin' | grep -q NT_GNU_BUILD_ID"
check "the Go program has a Go build-ID note" bash -c "readelf -n '$W/gospin' | grep -q 'Go '"
check "the stripped C program has no GNU build-ID note" bash -c "! readelf -n '$W/cspin1' | grep -q NT_GNU_BUILD_ID"
check "the C program keeps its GNU build-ID note" bash -c "readelf -n '$W/cspin' | grep -q NT_GNU_BUILD_ID"

# The recording and its checks, as a TAP subtest.
rc=0
sh "$SRC/check.sh" "$PB" "$W" >check.tap || rc=$?
sed 's/^/    /' check.tap
[ "$rc" = 77 ] && { echo "1..0 # SKIP $(grep -m1 SKIP check.tap)"; exit 77; }
check "identities/check.sh: recorded and read ($(grep -c '^ok' check.tap) passed)" test "$rc" = 0

"$PB" report -i id.data --format pprof -o id.pb.gz >/dev/null 2>&1
check "pprof: the Go mapping's build_id is its Go build ID, its kind in a comment" \
	bash -c "gzip -dc id.pb.gz | grep -aqF -e '$GO_ID' && gzip -dc id.pb.gz | grep -aqF -e 'build_id kind go: $W/gospin'"

"$PB" record -q -o - -- "$W/gospin" 100 2>pipe.err | "$PB" maps -i - >pipe.maps 2>/dev/null
check "pipe mode says it cannot carry the identities" \
	grep -q "without a GNU build id lose their Go build id or file hash" pipe.err

# The hash's limit: a change that keeps the length and touches neither the first nor the last
# 4 KiB is not seen. The recording's hash still matches the changed file.
cp "$W/cspin1" "$W/limit"
before=$(sha256sum <"$W/limit")
printf '\xcc' | dd of="$W/limit" bs=1 seek=$((CSPIN1_SIZE / 2)) conv=notrunc status=none
check "limit: the file changed ($CSPIN1_SIZE bytes, one byte in the middle)" \
	test "$(sha256sum <"$W/limit")" != "$before"
"$PB" record -q -F 2000 -o limit.data -- "$W/limit" 100 2>/dev/null
check "limit: its file hash did not" \
	grep -q " file-hash:$HASH_V1 .* $W/limit\$" <("$PB" maps -i limit.data)

echo "1..$n"
[ "$fails" -eq 0 ]
