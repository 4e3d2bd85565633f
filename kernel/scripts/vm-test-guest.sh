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
