#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# prepare.sh OUTDIR: the programs of the identity tests and what their identities must be.
# Builds, into OUTDIR:
#   gospin   a Go program linked by Go's own linker (a Go build-ID note, no GNU one);
#   cspin    a C program with its GNU build-ID note;
#   cspin1, cspin2  two variants of a C program stripped of their GNU notes.
# and writes OUTDIR/expected (sourced by check.sh, in the guests too): the Go build ID as
# `go tool buildid` prints it, and each program's file hash computed here, from the
# OpenTelemetry specification's definition, with head, tail, printf and sha256sum.
# Exits 77 when go is not installed.
set -euo pipefail
out=$1
src=$(cd "$(dirname "$0")" && pwd)

command -v go >/dev/null || { echo "prepare.sh: go not installed" >&2; exit 77; }
mkdir -p "$out/home"

. "$(dirname "$0")/../util/file-hash.sh"

# Go's default (internal) linker, offline: no module, no proxy, a private cache.
env GOFLAGS= GOPROXY=off GO111MODULE=off HOME="$out/home" GOCACHE="$out/gocache" \
	go build -o "$out/gospin" "$src/spin.go"
cc -O1 -Wl,--build-id=sha1 -o "$out/cspin" "$src/spin.c"
cc -O1 -Wl,--build-id=sha1 -o "$out/cspin1" "$src/spin.c"
cc -O1 -DVARIANT=3 -Wl,--build-id=sha1 -o "$out/cspin2" "$src/spin.c"
objcopy --remove-section .note.gnu.build-id "$out/cspin1"
objcopy --remove-section .note.gnu.build-id "$out/cspin2"

{
	echo "GO_ID=$(env HOME="$out/home" GOCACHE="$out/gocache" go tool buildid "$out/gospin")"
	echo "HASH_GOSPIN=$(ref_hash "$out/gospin")"
	echo "HASH_CSPIN=$(ref_hash "$out/cspin")"
	echo "HASH_V1=$(ref_hash "$out/cspin1")"
	echo "HASH_V2=$(ref_hash "$out/cspin2")"
	echo "CSPIN1_SIZE=$(stat -c %s "$out/cspin1")"
} >"$out/expected.tmp"
mv "$out/expected.tmp" "$out/expected"
