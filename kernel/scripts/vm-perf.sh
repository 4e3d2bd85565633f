#!/usr/bin/env bash
# vm-perf.sh KERNEL: run perf-buildid's smoke test (tools/perf/tests/vm-smoke.sh) inside
# KERNEL: record the workload, then check the build IDs that `maps` and `buildid-list` report
# against the ones readelf saw at build time. On 5.10-buildid they come from the kernel's
# MMAP2 records, on pristine 5.10 through the /proc/PID/map_files fallback. Then DWARF call
# graphs and perf's everyday record command lines. Then the identities of mappings without a
# GNU build ID (tools/perf/tests/identities/check.sh): a Go program's Go build ID and the file
# hash of stripped programs, one of them replaced at its path while recording.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
bin=$LAB_ROOT/build/bin
# The unwinding fixture: DWARF call graphs recorded and unwound in the guest.
unwind=$LAB_ROOT/build/perf/symbolize/fixtures/unwind
# The identity programs, built on the host with what their identities must be (go, objcopy
# and sha256sum are not in the guest).
ids_src=$LAB_ROOT/tools/perf/tests/identities
ids=$LAB_ROOT/build/vm-perf-identities
rm -rf "$ids"
"$ids_src/prepare.sh" "$ids" || die "identities/prepare.sh failed (is go installed?)"
# Both parts run even when the first fails, and either failing fails the payload.
vm_payload_run vm-perf "$kname" \
	'LD_LIBRARY_PATH=/payload sh ./vm-smoke.sh /payload/perf-buildid /payload/pbid-workload 400 /payload/unwind_workload; s=$?; mkdir -p /tmp/ids && cp gospin cspin cspin1 cspin2 expected /tmp/ids/ && LD_LIBRARY_PATH=/payload sh ./check.sh /payload/perf-buildid /tmp/ids; i=$?; [ "$s" = 0 ] && [ "$i" = 0 ]' \
	"$bin/perf-buildid" "$bin/pbid-workload" "$bin/pbid-workload.buildids" \
	"$LAB_ROOT/tools/perf/tests/vm-smoke.sh" "$unwind/unwind_workload" "$unwind/libunwind_hot.so" \
	"$ids/gospin" "$ids/cspin" "$ids/cspin1" "$ids/cspin2" "$ids/expected" "$ids_src/check.sh"
