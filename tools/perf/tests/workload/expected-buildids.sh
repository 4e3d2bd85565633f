#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Writes "<build id> <file name>" for each ELF given, read with readelf -n (binutils), so
# that tests in a guest without readelf know what to expect.
# Usage: expected-buildids.sh OUTPUT FILE...
set -eu
out=$1
shift
tmp=$out.tmp
: >"$tmp"
for f in "$@"; do
	id=$(readelf -n "$f" | awk '/Build ID:/ { print $3; exit }')
	if [ -z "$id" ]; then
		echo "expected-buildids.sh: $f has no build id" >&2
		exit 1
	fi
	echo "$id $(basename "$f")" >>"$tmp"
done
mv "$tmp" "$out"
