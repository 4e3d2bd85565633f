#!/usr/bin/env bash
# vm-bpf.sh KERNEL: perf-buildid's BPF program inside KERNEL. Its test (tools/perf/bpf/
# stack_ids_test) loads the program with libbpf, attaches it to a sampling event on the
# workload and checks the build ids and file offsets the kernel reports against readelf's ids
# and the workload's mappings. BPF must work there (PBID_BPF_EXPECT=1): a failure to load is a
# FAIL, not a SKIP. Pristine 5.10 has what it needs from kernel/configs/bpf.config.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
bin=$LAB_ROOT/build/bin
test_bin=$LAB_ROOT/build/perf/bpf/tests/stack_ids_test
[ -x "$test_bin" ] || die "$test_bin is missing: run make perf-buildid (with libbpf-dev, bpftool, clang)"
vm_payload_run vm-bpf "$kname" \
	'PBID_BPF_EXPECT=1 PBID_WORKLOAD=/payload/pbid-workload ./stack_ids_test' \
	"$test_bin" "$bin/pbid-workload" "$bin/pbid-workload.buildids"
