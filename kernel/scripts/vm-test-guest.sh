#!/bin/sh
# vm-test-guest.sh PROGRAM...: vm-test.sh's payload, run by busybox sh in the guest from
# /payload. Runs the selftest PROGRAMs (perf_events/) twice: from the initramfs, then the copy on
# the ext4 disk with BUILDID_COLD=1. Each gets $LAB_TIMEOUT seconds; $LAB_EXPECT (when not empty)
# becomes BUILDID_EXPECT. vm-test.sh reads the verdicts back from the console: the lines it
# parses are the "# lab run:", "# selftests: perf_events:" and "# exit=" lines below and the
# programs' own.
rc=0
[ -n "$LAB_BLOCK_DIR" ] || { echo "lab: no ext4 disk in the guest"; exit 1; }
export BUILDID_BLOCK_DIR="$LAB_BLOCK_DIR/perf_events" BUILDID_LAB=1
[ -z "$LAB_EXPECT" ] || export BUILDID_EXPECT="$LAB_EXPECT"
# A HIGHMEM kernel (32-bit) with more memory than it maps directly keeps the page cache in high
# memory, where the build-ID parser's kmap_atomic() maps real pages. Shown, not assumed: the
# disk's files read from a dropped cache, and how far HighFree fell (vm-test.sh checks it).
if grep -q '^HighTotal:' /proc/meminfo; then
	sync
	echo 3 >/proc/sys/vm/drop_caches
	high() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }
	before=$(high HighFree)
	bytes=$(find "$BUILDID_BLOCK_DIR" -type f | while read -r f; do cat "$f"; done | wc -c)
	echo "# lab highmem: HighTotal=$(high HighTotal) read=$((bytes / 1024)) fell=$((before - $(high HighFree)))"
fi
for run in warm cold; do
	if [ "$run" = warm ]; then
		cd /payload/perf_events || exit 1
		unset BUILDID_COLD
	else
		cd "$BUILDID_BLOCK_DIR" || exit 1
		export BUILDID_COLD=1
	fi
	echo "# lab run: $run"
	for p in "$@"; do
		echo "# selftests: perf_events: $p"
		timeout -s KILL "$LAB_TIMEOUT" "./$p"
		r=$?
		[ "$r" != 137 ] || echo "# TIMEOUT: $p killed after $LAB_TIMEOUT s (settings)"
		# 4 is KSFT_SKIP: every case skipped is not a failure
		echo "# exit=$r $p"
		[ "$r" = 0 ] || [ "$r" = 4 ] || rc=1
	done
done
exit "$rc"
