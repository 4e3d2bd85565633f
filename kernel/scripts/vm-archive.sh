#!/usr/bin/env bash
# vm-archive.sh [KERNEL]: the fleet round trip across machines. In KERNEL (default
# 5.10-buildid), `perf-buildid record --archive` records a workload whose files are deleted and
# replaced on disk while it runs, and the guest reports the recording right after
# (tools/perf/tests/archive-guest.sh). The archive and the recording come back on the guest's
# disk; on the host, elfutils' debuginfod serves the archive and report runs where none of
# the recorded files exists (tools/perf/tests/archive-served.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=${1:-5.10-buildid}
bin=$LAB_ROOT/build/bin
tests=$LAB_ROOT/tools/perf/tests
work=$LAB_ROOT/build/vm-archive/$kname
command -v debuginfod >/dev/null || die "debuginfod is missing (make deps installs it)"
for f in perf-buildid pbid-workload libpbidwork.so pbid-churn; do
	[ -e "$bin/$f" ] || die "$bin/$f is missing: run make perf-buildid first"
done
rm -rf "$work"
mkdir -p "$work/payload" "$work/disk"
cp "$bin/perf-buildid" "$bin/pbid-workload" "$bin/libpbidwork.so" "$bin/pbid-churn" \
	"$tests/archive-guest.sh" "$work/payload/"
# shellcheck disable=SC2016 # expanded in the guest
echo 'LD_LIBRARY_PATH=/payload sh ./archive-guest.sh /payload/perf-buildid /payload "$LAB_BLOCK_DIR"' \
	>"$work/payload/run.sh"
"$LAB_ROOT/kernel/scripts/vm-run.sh" -t 300 -m 1024 -d "$work/disk" -o "$work/disk.img" \
	"$kname" "$work/payload" "$work/console.log" || die "the guest part failed: $work/console.log"
mkdir -p "$work/out"
debugfs -R "rdump / $work/out" "$work/disk.img" >/dev/null 2>&1 ||
	die "cannot read the guest's disk back"
"$tests/archive-served.sh" "$bin/perf-buildid" "$work/out"
