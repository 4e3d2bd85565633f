#!/usr/bin/env bash
# vm-stress.sh KERNEL [SECONDS [SEED]]: boots KERNEL and runs buildid_stress
# (tools/testing/selftests/perf_events) for SECONDS (default 60) with SEED (default: the time),
# on an ext4 disk, so that dropping pages from the page cache drops them, with two vCPUs, so
# that a rewrite can land between two reads of the parser on a kernel that is not preemptible
# (QEMU runs them on threads of their own: MTTCG). The arm64 guests use both (the device tree
# lists them), and so do the x86_64 KASAN kernels, whose config has ACPI (QEMU's ACPI tables list
# both); the other x86_64 kernels see one, as SeaBIOS's MP table lists the boot CPU only. The
# program prints how many it saw. The console must stay
# clean (vm-run.sh: no KASAN, lockdep, BUG, WARN or RCU stall report) and every build ID in an
# MMAP2 record must be one its file had, or torn between two of them. The console is
# build/vm-stress/KERNEL/console.log; the seed line replays a run.
#
# A kernel without build IDs in MMAP2 (pristine 5.10, 5.10-fixes) has only the BPF path:
# there the stress is vm-exec-race.sh, build-ID stacks sampled at 10 kHz while children exec
# (5.10's vmacache race), for as long, and the console must stay clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1 secs=${2:-60} seed=${3:-$(date +%s)}
parse_name "$kname"
if [ "$K_FEATURE" = 0 ]; then
	progress "vm-stress $kname" "no build IDs in MMAP2: BPF build-ID stacks during exec churn"
	mkdir -p "$LAB_ROOT/build/vm-stress"
	exec "$LAB_ROOT/kernel/scripts/vm-exec-race.sh" "$kname" "$secs" \
		"$LAB_ROOT/build/vm-stress/$kname.console.log"
fi
image=$("$LAB_ROOT/kernel/scripts/build.sh" "$kname")
imgdir=$(dirname "$image")
out=$LAB_ROOT/build/vm-stress/$kname
rm -rf "$out"
mkdir -p "$out/obj" "$out/payload" "$out/disk"
progress "vm-stress $kname" "build buildid_stress"
selftests_build "$(cat "$imgdir/source")" "$imgdir" "$out"
mv "$out/payload/perf_events/buildid_stress" "$out/payload/perf_events/buildid_fixtures" \
	"$out/disk/"
rm -rf "$out/payload/perf_events"
cat >"$out/payload/run.sh" <<GUEST
cd "\$LAB_BLOCK_DIR" && ./buildid_stress -t $secs -s $seed -d "\$LAB_BLOCK_DIR/files"
GUEST
"$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$out/disk" -m 1024 -c 2 -t $((secs + 240)) "$kname" \
	"$out/payload" "$out/console.log" || {
	rc=$?
	grep -E '^# |ok 1' "$out/console.log" >&2 || true
	exit "$rc"
}
grep -E '^# |ok 1' "$out/console.log"
