# Shared by the bench scripts: paths, errors, and the statistics every table uses.
# shellcheck shell=bash

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PBID=${PBID:-$BENCH_ROOT/build/bin/perf-buildid}
# The lab's cache directory (CACHE, which BUILDID_MMAP_CACHE moves) and its die().
. "$BENCH_ROOT/kernel/scripts/common.sh"

# awk functions, put in front of a program: the median of a space-separated list of numbers
# (the mean of the middle two for an even count), and its range as "lo–hi".
BENCH_AWK_STATS='
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function spread(list,   n, a, i, lo, hi) {
	n = split(list, a, " "); lo = hi = a[1]
	for (i = 2; i <= n; i++) { if (a[i] + 0 < lo) lo = a[i]; if (a[i] + 0 > hi) hi = a[i] }
	return lo "–" hi
}
'

# make_elves ELF DIR: DIR/e1 .. DIR/e1000, distinct files (distinct inodes) with ELF's bytes and mode,
# which the mmap storms map in turn so that the kernel parses each one. tee writes 250 at a
# time: one process per 250 files rather than 1000 cp processes (seconds per bench script),
# within the usual limit of 1024 open files.
make_elves() {
	local elf=$1 dir=$2 i names
	mkdir "$dir"
	for ((i = 1; i <= 1000; i += 250)); do
		mapfile -t names < <(seq -f "$dir/e%.0f" "$i" $((i + 249)))
		tee "${names[@]}" <"$elf" >/dev/null
		chmod --reference="$elf" "${names[@]}"
	done
}
