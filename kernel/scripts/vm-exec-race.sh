#!/usr/bin/env bash
# vm-exec-race.sh KERNEL [SECONDS [CONSOLE]]: 5.10's vmacache race, provoked in QEMU. pbid-exec-race
# (tools/perf/bpf/exec_race.cpp) samples the guest every 100 us with a BPF program that asks
# for build-id stacks in every sample, kernel mode included, while children exec in a loop,
# for SECONDS (default 90). The exit status is vm-run.sh's: 0 the kernel stayed clean and the
# program ran, 2 the console shows an Oops or another splat. The console goes to CONSOLE
# (default build/vm-exec-race/KERNEL/console.log).
#
# The guest is told the TSC's frequency (TCG's guest TSC runs at the host's): calibrated
# against the emulated PIT it now and then fails, the kernel then has no high-resolution
# clock and samples at 250 Hz whatever the period asks, too slow to hit the race in minutes
# (pbid-exec-race fails such a run: nothing was tested).
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
seconds=${2:-90}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive number, not '$seconds'"
bin=$LAB_ROOT/build/bin/pbid-exec-race
[ -x "$bin" ] || die "$bin is missing: run make perf-buildid (with libbpf-dev, bpftool, clang)"
work=$LAB_ROOT/build/vm-exec-race/$kname
rm -rf "$work"
mkdir -p "$work/payload"
cp "$bin" "$work/payload/"
printf '%s\n' "./pbid-exec-race $seconds /bin/true" >"$work/payload/run.sh"
khz=$(awk -F': *' '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
[ -n "$khz" ] || die "no cpu MHz in /proc/cpuinfo"
LAB_CMDLINE="tsc_early_khz=$khz tsc=reliable ${LAB_CMDLINE:-}" exec "$LAB_ROOT/kernel/scripts/vm-run.sh" \
	-t $((seconds + 120)) "$kname" "$work/payload" "${3:-$work/console.log}"
