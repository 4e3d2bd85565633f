#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check.sh PERF-BUILDID DIR: records the identity programs that prepare.sh built into DIR and
# checks what perf-buildid names them. Runs on the host and in the lab's guests (busybox sh:
# no python, readelf or go here; DIR/expected carries what they would say).
#
# One recording: the Go program, the C program with its GNU note, and "victim": first a
# stripped C program, then another stripped one moved over the same path. Checks the Go build
# ID against `go tool buildid`'s, the file hashes against the specification's, that the
# replaced file is two identities (and is not used for the first one's symbols), the kinds in
# maps and script, that no Go build ID or hash enters perf's HEADER_BUILD_ID, and the coverage
# summary's rows. Prints TAP; exits non-zero when a check fails; 77 when it cannot record.
PB=$1
W=$2
. "$W/expected" || exit 1
cd "$W" || exit 1

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() {
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

echo "TAP version 13"
echo "# kernel $(uname -r); go tool buildid: $GO_ID"
cp "$W/cspin1" "$W/victim" || exit 1
if ! "$PB" record -q -F 2000 -o id.data -- sh -c \
	"'$W/gospin' 300 && '$W/cspin' 300 && '$W/victim' 300 && cp '$W/cspin2' '$W/victim.new' &&
	 mv '$W/victim.new' '$W/victim' && '$W/victim' 300" 2>record.err; then
	if grep -q "perf_event_open" record.err; then
		echo "1..0 # SKIP cannot record: $(head -n 1 record.err)"
		exit 77
	fi
	sed 's/^/# /' record.err
	exit 1
fi
"$PB" maps -i id.data >maps.txt
"$PB" maps --json -i id.data >maps.json
"$PB" script -i id.data >script.txt
"$PB" report -i id.data >report.txt 2>report.err
grep -E "spin|victim" maps.txt | sed 's/^/# /'

# ids PATH: the identities maps gives PATH's executable mappings, sorted, on one line.
# maps prints PID RANGE OFFSET PROT SAMPLES ID SOURCE PATH.
ids() {
	awk -v p="$1" '$4 == "r-xp" && $NF == p { print $6 }' maps.txt | sort -u | tr '\n' ' '
}
check "the Go program's identity is go tool buildid's Go build ID" \
	test "$(ids "$W/gospin")" = "go:$GO_ID "
check "the C program's identity is its GNU build ID" \
	grep -qE "r-xp [0-9]+ [0-9a-f]{40} [a-z]+ $W/cspin\$" maps.txt
check "the stripped program replaced at one path: two file hashes, the specification's" \
	test "$(ids "$W/victim")" = "$(printf 'file-hash:%s\n' "$HASH_V1" "$HASH_V2" | sort -u | tr '\n' ' ')"
check "the two variants differ in their file hash" test "$HASH_V1" != "$HASH_V2"
check "script names the kinds" \
	sh -c "grep -q '$W/gospin.*<go:$GO_ID>' script.txt && grep -q '$W/victim.*<file-hash:$HASH_V2>' script.txt"
# json FIELD VALUE PATH: a mapping of PATH has FIELD VALUE in maps --json (one object a line).
json() {
	grep -F "\"path\": \"$3\"" maps.json | grep -qF "\"$1\": \"$2\""
}
check "maps --json: the Go program's Go build ID" json go_build_id "$GO_ID" "$W/gospin"
check "maps --json: the Go program's file hash is the specification's" \
	json file_hash "$HASH_GOSPIN" "$W/gospin"
check "maps --json: the C program's file hash is the specification's" \
	json file_hash "$HASH_CSPIN" "$W/cspin"
check "no Go build ID or hash in perf's HEADER_BUILD_ID" \
	sh -c "! '$PB' buildid-list -i id.data | grep -qE '$HASH_GOSPIN|$HASH_V1|$HASH_V2'"

sed -n '/Build-ID coverage/,$p' report.txt | sed 's/^/# /'
row() { awk -v r="$1" 'index($0, "#   " r " ") == 1 { print $(NF - 1) }' report.txt; }
check "coverage: samples identified by the Go build ID" test "$(row "no GNU build ID, identified by Go build ID")" -gt 0
check "coverage: samples identified by the file hash only" test "$(row "identified by file hash only")" -gt 0
check "coverage: no samples without an identity" test "$(row "none")" -eq 0
# The victim at its path now is the second file: the first mapping's identity does not match it.
check "the replaced file is not used for the first mapping's symbols" \
	grep -q "recorded path with another build ID (mismatch, not used): [1-9]" report.txt
check "the Go program is symbolized from its recorded path (Go build ID and hash match)" \
	grep -q "main.spin" report.txt

echo "1..$n"
[ "$fails" -eq 0 ]
