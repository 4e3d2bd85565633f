#!/usr/bin/env bash
# compare-verdicts.sh REF KERNEL [LIST]: the selftest verdicts of KERNEL must equal those of REF
# case by case (build/selftests/NAME/verdicts.txt, written by `make vm-test KERNEL=NAME`),
# except for the cases that LIST names, one a line:
#   <program> <case> <verdict on REF> <verdict on KERNEL>  <reason>
# A listed difference that no longer shows up fails too, so that the list stays true. Prints
# one line; exits 1 on any other difference or when a verdict file is missing or empty.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -ge 2 ] || die "usage: compare-verdicts.sh REF KERNEL [LIST]"
ref=$1 kname=$2 list=${3:-/dev/null}
a=$LAB_ROOT/build/selftests/$ref/verdicts.txt
b=$LAB_ROOT/build/selftests/$kname/verdicts.txt
for f in "$a" "$b"; do
	[ -s "$f" ] || die "no verdicts in $f (run make vm-test KERNEL=$(basename "$(dirname "$f")") first)"
done
[ -r "$list" ] || die "no list of expected differences: $list"

awk -v ref="$ref" -v k="$kname" '
	FILENAME == ARGV[1] { if (NF && $1 !~ /^#/) want[$1 " " $2] = $3 " " $4; next }
	FILENAME == ARGV[2] { r[$1 " " $3] = $2; all[$1 " " $3] = 1; next }
	{ v[$1 " " $3] = $2; all[$1 " " $3] = 1 }
	END {
		for (c in want)
			all[c] = 1
		for (c in all) {
			got = (c in r ? r[c] : "-") " " (c in v ? v[c] : "-")
			if (c in want) {
				if (got != want[c]) {
					printf "%s: %s/%s %s, listed as %s\n", c, ref, k, got, want[c] >"/dev/stderr"
					bad++
				} else {
					listed++
				}
			} else if (!(c in r) || !(c in v) || r[c] != v[c]) {
				printf "%s: %s/%s %s\n", c, ref, k, got >"/dev/stderr"
				bad++
			} else {
				same++
			}
		}
		printf "verdicts %s vs %s: %d cases identical, %d listed differences, %d unexpected\n",
			k, ref, same, listed, bad
		exit bad ? 1 : 0
	}' "$list" "$a" "$b"
