#!/usr/bin/env bash
# vm-perf.sh KERNEL: run perf-buildid's smoke test (tools/perf/tests/vm-smoke.sh) inside
# KERNEL: record the workload, then check the build IDs that `maps` and `buildid-list` report
# against the ones readelf saw at build time. On 5.10-buildid they come from the kernel's
# MMAP2 records, on pristine 5.10 through the /proc/PID/map_files fallback. Then DWARF call
# graphs and perf's everyday record command lines.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
bin=$LAB_ROOT/build/bin
# The unwinding fixture: DWARF call graphs recorded and unwound in the guest.
unwind=$LAB_ROOT/build/perf/symbolize/fixtures/unwind
vm_payload_run vm-perf "$kname" \
	'LD_LIBRARY_PATH=/payload sh ./vm-smoke.sh /payload/perf-buildid /payload/pbid-workload 400 /payload/unwind_workload' \
	"$bin/perf-buildid" "$bin/pbid-workload" "$bin/pbid-workload.buildids" \
	"$LAB_ROOT/tools/perf/tests/vm-smoke.sh" "$unwind/unwind_workload" "$unwind/libunwind_hot.so"
