#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mapping identities other than the GNU build ID: a Go program linked by Go's own linker (a Go
# build-ID note, no GNU one) and a C program stripped of its GNU note, recorded with
# perf-buildid. Checks the Go build ID against `go tool buildid`, the file hash against the
# OpenTelemetry specification's definition computed here with head, tail, printf and
# sha256sum, that a file replaced at the same path is another identity (and is not used for
# symbols), the coverage summary's rows, the pprof mapping, and the hash's documented limit.
# Prints TAP; 77 (skip) without go or perf_event_open.
#
# Usage: identities.sh PERF-BUILDID WORKDIR
set -euo pipefail
PB=$1
W=$2
SRC=$(cd "$(dirname "$0")/identities" && pwd)

command -v go >/dev/null || { echo "1..0 # SKIP go not installed"; exit 77; }
rm -rf "$W"
mkdir -p "$W/home"
cd "$W"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

# The file hash as the OpenTelemetry specification defines it (profiles, mappings, "htlhash"):
# SHA-256 over the first 4096 bytes, the last 4096 bytes (they may overlap; no padding) and
# the length as a big-endian 64-bit integer, truncated to 16 bytes, in hex.
ref_hash() {
	local f=$1 size i
	size=$(stat -c %s "$f")
	{
		head -c 4096 "$f"
		tail -c 4096 "$f"
		for i in 7 6 5 4 3 2 1 0; do
			# shellcheck disable=SC2059 # the format is the byte, as an octal escape
			printf "\\$(printf %03o $(((size >> (8 * i)) & 255)))"
		done
	} | sha256sum | cut -c1-32
}

# Go's default (internal) linker, offline: no module, no proxy, a private cache.
env GOFLAGS= GOPROXY=off GO111MODULE=off HOME="$W/home" GOCACHE="$W/gocache" \
	go build -o "$W/gospin" "$SRC/spin.go"
cc -O1 -Wl,--build-id=sha1 -o "$W/cspin" "$SRC/spin.c"
cc -O1 -Wl,--build-id=sha1 -o "$W/cspin1" "$SRC/spin.c"
cc -O1 -DVARIANT=3 -Wl,--build-id=sha1 -o "$W/cspin2" "$SRC/spin.c"
objcopy --remove-section .note.gnu.build-id "$W/cspin1"
objcopy --remove-section .note.gnu.build-id "$W/cspin2"

check "the Go program has no GNU build-ID note" bash -c "! readelf -n '$W/gospin' | grep -q NT_GNU_BUILD_ID"
check "the Go program has a Go build-ID note" bash -c "readelf -n '$W/gospin' | grep -q 'Go '"
check "the stripped C program has no GNU build-ID note" bash -c "! readelf -n '$W/cspin1' | grep -q NT_GNU_BUILD_ID"
check "the C program keeps its GNU build-ID note" bash -c "readelf -n '$W/cspin' | grep -q NT_GNU_BUILD_ID"
GO_ID=$(env HOME="$W/home" GOCACHE="$W/gocache" go tool buildid "$W/gospin")
echo "# go tool buildid: $GO_ID"

# One recording: the Go program, a C program with its GNU note, and "victim": first the
# stripped C program, then another stripped one moved over the same path.
cp "$W/cspin1" "$W/victim"
if ! "$PB" record -q -F 2000 -o id.data -- sh -c \
	"'$W/gospin' 300 && '$W/cspin' 300 && '$W/victim' 300 && cp '$W/cspin2' '$W/victim.new' &&
	 mv '$W/victim.new' '$W/victim' && '$W/victim' 300" 2>record.err; then
	if grep -q "perf_event_open" record.err; then
		echo "1..0 # SKIP cannot record: $(head -1 record.err)"
		exit 77
	fi
	sed 's/^/# /' record.err
	exit 1
fi
"$PB" maps --json -i id.data >maps.json
"$PB" maps -i id.data >maps.txt
"$PB" script -i id.data >script.txt
grep -E "spin|victim" maps.txt | sed 's/^/# /'

field() {  # field PATH KEY: KEY of every mapping of PATH, one a line
	python3 -c '
import json, sys
for m in json.load(open("maps.json")):
    if m["path"] == sys.argv[1] and m["prot"] == "r-xp":
        v = m
        for k in sys.argv[2].split("."):
            v = v[k]
        print(v)' "$1" "$2"
}

check "the Go build ID recorded is go tool buildid's" \
	test "$(field "$W/gospin" go_build_id | sort -u)" = "$GO_ID"
check "the Go program's identity is its Go build ID" \
	test "$(field "$W/gospin" identity.kind | sort -u)" = go
GO_HASH=$(ref_hash "$W/gospin")
echo "# file hash of gospin: reference $GO_HASH, recorded $(field "$W/gospin" file_hash | sort -u)"
check "the Go program's file hash is the specification's" \
	test "$(field "$W/gospin" file_hash | sort -u)" = "$GO_HASH"
check "the C program's file hash is the specification's" \
	test "$(field "$W/cspin" file_hash | sort -u)" = "$(ref_hash "$W/cspin")"
check "the C program's identity is its GNU build ID" \
	test "$(field "$W/cspin" identity.kind | sort -u)" = gnu
V1=$(ref_hash "$W/cspin1")
V2=$(ref_hash "$W/cspin2")
check "the two variants of victim differ in their file hash" test "$V1" != "$V2"
check "the replaced file: two identities, each its file's hash" \
	test "$(field "$W/victim" file_hash | sort -u | tr '\n' ' ')" = "$(printf '%s\n' "$V1" "$V2" | sort -u | tr '\n' ' ')"
check "the stripped program's identity is its file hash" \
	test "$(field "$W/victim" identity.kind | sort -u)" = file-hash
check "maps names the kind" grep -q " go:$GO_ID .* $W/gospin\$" maps.txt
check "maps names the file hash" grep -q " file-hash:$V1 .* $W/victim\$" maps.txt
check "script names the kinds" \
	bash -c "grep -q '$W/gospin.*<go:$GO_ID>' script.txt && grep -q '$W/victim.*<file-hash:$V2>' script.txt"
check "no Go build ID or hash in perf's HEADER_BUILD_ID" \
	bash -c "! '$PB' buildid-list -i id.data | grep -qE '$GO_HASH|$V1|$V2'"

"$PB" report -i id.data >report.txt 2>report.err
sed -n '/Build-ID coverage/,$p' report.txt | sed 's/^/# /'
row() { awk -v r="$1" 'index($0, "#   " r " ") == 1 { print $(NF - 1) }' report.txt; }
check "coverage: samples identified by the Go build ID" test "$(row "no GNU build ID, identified by Go build ID")" -gt 0
check "coverage: samples identified by the file hash only" test "$(row "identified by file hash only")" -gt 0
check "coverage: samples with a GNU build ID" test "$(row "kernel record (MMAP2)")" -gt 0
# The victim at its path now is the second file: the first mapping's identity does not match it.
check "the replaced file is not used for the first mapping's symbols" \
	grep -q "recorded path with another build ID (mismatch, not used): [1-9]" report.txt
check "the Go program is symbolized from its recorded path (Go build ID and hash match)" \
	grep -q "main.spin" report.txt

"$PB" report -i id.data --format pprof -o id.pb.gz >/dev/null 2>&1
check "pprof: the Go mapping's build_id is its Go build ID, its kind in a comment" \
	bash -c "gzip -dc id.pb.gz | grep -aq '$GO_ID' && gzip -dc id.pb.gz | grep -aq 'build_id kind go: $W/gospin'"

"$PB" record -q -o - -- "$W/gospin" 100 2>pipe.err | "$PB" maps -i - >pipe.maps 2>/dev/null
check "pipe mode says it cannot carry the identities" grep -q "Go build ids and file hashes not written" pipe.err

# The hash's limit: a change that keeps the length and touches neither the first nor the last
# 4 KiB is not seen. The recording's hash still matches the changed file.
cp "$W/cspin1" "$W/limit"
size=$(stat -c %s "$W/limit")
before=$(sha256sum <"$W/limit")
printf '\xcc' | dd of="$W/limit" bs=1 seek=$((size / 2)) conv=notrunc status=none
check "limit: the file changed ($size bytes, one byte in the middle)" \
	test "$(sha256sum <"$W/limit")" != "$before"
check "limit: its file hash did not" test "$(ref_hash "$W/limit")" = "$V1"

echo "1..$n"
[ "$fails" -eq 0 ]
