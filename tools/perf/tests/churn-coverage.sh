#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# churn-coverage.sh PERF-BUILDID PBID-CHURN DIR [CHILDREN [RECORD-OPTION...]]: record pbid-churn
# (short-lived children whose files are shared, deleted or replaced while they run) and count,
# over the samples in each child's own executable, those whose mapping got the child's build id
# (correct), another id (wrong) or none. Runs in the VM guests (busybox sh and awk) and on the
# host. Prints one line per mode and a total; exits 1 when any sample got a wrong id, or when
# COVERAGE_MIN (percent, default 0) is not reached, 2 on a usage or recording error.
PB=$1
CHURN=$2
DIR=$3
N=${4:-150}
if [ -z "$PB" ] || [ -z "$CHURN" ] || [ -z "$DIR" ]; then
	echo "usage: $0 PERF-BUILDID PBID-CHURN DIR [CHILDREN [RECORD-OPTION...]]" >&2
	exit 2
fi
shift 4 2>/dev/null || shift $#
rm -rf "$DIR/churn" && mkdir -p "$DIR" || exit 2
"$PB" record -q -F 2000 -o "$DIR/churn.data" "$@" -- "$CHURN" "$DIR/churn" "$N" \
	>"$DIR/expected.txt" || { echo "churn-coverage: recording failed" >&2; exit 2; }
"$PB" maps -i "$DIR/churn.data" >"$DIR/maps.txt" || { echo "churn-coverage: maps failed" >&2; exit 2; }
awk -v dir="$DIR/churn/" -v min="${COVERAGE_MIN:-0}" '
FILENAME == ARGV[1] { want[$1] = $2; mode[$1] = $3; next }
# maps: pid range pgoff perms samples id source path
index($8, dir) == 1 && ($1 in want) {
	m = mode[$1]; n = $5
	if ($6 == want[$1]) correct[m] += n
	# without a GNU build id a mapping may show another kind of identity (go:, file-hash:)
	else if ($6 == "-" || $6 ~ /:/) none[m] += n
	else { wrong[m] += n; print "churn-coverage: WRONG id " $6 " for pid " $1 " (" m "), which ran " want[$1] }
	total[m] += n
}
END {
	split("shared deleted replaced", modes, " ")
	for (i = 1; i <= 3; i++) {
		m = modes[i]; t = total[m] + 0
		printf "churn-coverage %-8s samples %5d correct %5.1f%% wrong %d none %5.1f%%\n", m, t,
			t ? 100 * correct[m] / t : 0, wrong[m], t ? 100 * none[m] / t : 0
		all += t; c += correct[m]; w += wrong[m]; z += none[m]
	}
	printf "churn-coverage all      samples %5d correct %5.1f%% wrong %d none %5.1f%%\n", all,
		all ? 100 * c / all : 0, w, all ? 100 * z / all : 0
	if (all == 0) { print "churn-coverage: no sample in the children"; exit 1 }
	if (w > 0) exit 1
	if (100 * c / all < min) { printf "churn-coverage: below %s%%\n", min; exit 1 }
}' "$DIR/expected.txt" "$DIR/maps.txt"
