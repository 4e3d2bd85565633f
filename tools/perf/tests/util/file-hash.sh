# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the tests that check a file hash against an independent computation
# (identities/prepare.sh, special-files.sh).

# ref_hash FILE: the file hash as the OpenTelemetry specification defines it (profiles,
# mappings, "htlhash"): SHA-256 over the first 4096 bytes, the last 4096 bytes (they may
# overlap; no padding) and the length as a big-endian 64-bit integer, truncated to 16 bytes, in
# hex. Computed by head, tail, printf and sha256sum, not by the code under test.
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
