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
for f in pbid-workload pbid-workload.buildids; do
	[ -e "$bin/$f" ] || die "$bin/$f is missing: run make perf-buildid first"
done
work=$LAB_ROOT/build/vm-bpf/$kname
rm -rf "$work"
mkdir -p "$work/payload"
cp "$test_bin" "$bin/pbid-workload" "$bin/pbid-workload.buildids" "$bin"/libpbidwork*.so \
	"$work/payload/"
cat >"$work/payload/run.sh" <<'GUEST'
PBID_BPF_EXPECT=1 PBID_WORKLOAD=/payload/pbid-workload ./stack_ids_test
GUEST
exec "$LAB_ROOT/kernel/scripts/vm-run.sh" -t 180 "$kname" "$work/payload" "$work/console.log"
