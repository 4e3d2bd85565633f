#!/usr/bin/env bash
# vm-coverage.sh KERNEL [CHILDREN]: how many samples of short-lived children get their build
# id, inside KERNEL (tools/perf/tests/churn-coverage.sh under pbid-churn, files on the guest's
# ext4 disk). No sample may get a wrong id anywhere. With the feature (*-buildid, 6.12) every
# sample must get the right one. On a kernel without it, record runs three times on the same
# workload: with the file path only (--bpf=off), whose share is printed; with its BPF program
# only (--no-buildid-file), which must reach 99% by itself, so that a broken BPF path cannot
# hide behind the file path; and with both (record's default there), which must reach 99%.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1 children=${2:-150}
parse_name "$kname"
bin=$LAB_ROOT/build/bin
for f in perf-buildid pbid-churn; do
	[ -x "$bin/$f" ] || die "$bin/$f is missing: run make perf-buildid first"
done
feature=$K_FEATURE
work=$LAB_ROOT/build/vm-coverage/$kname
rm -rf "$work"
mkdir -p "$work/payload" "$work/disk"
cp "$bin/perf-buildid" "$bin/pbid-churn" "$LAB_ROOT/tools/perf/tests/churn-coverage.sh" \
	"$work/payload/"
if [ "$feature" = 1 ]; then
	cat >"$work/payload/run.sh" <<GUEST
echo "churn-coverage mode: kernel records"
COVERAGE_MIN=100 sh ./churn-coverage.sh /payload/perf-buildid /payload/pbid-churn \\
	"\$LAB_BLOCK_DIR/coverage" $children
GUEST
else
	cat >"$work/payload/run.sh" <<GUEST
rc=0
echo "churn-coverage mode: file path only (--bpf=off)"
COVERAGE_MIN=0 sh ./churn-coverage.sh /payload/perf-buildid /payload/pbid-churn \\
	"\$LAB_BLOCK_DIR/coverage-path" $children --bpf=off || rc=1
echo "churn-coverage mode: BPF program only (--no-buildid-file)"
COVERAGE_MIN=99 sh ./churn-coverage.sh /payload/perf-buildid /payload/pbid-churn \\
	"\$LAB_BLOCK_DIR/coverage-bpf-only" $children --no-buildid-file || rc=1
echo "churn-coverage mode: BPF program and file path (record's default here)"
COVERAGE_MIN=99 sh ./churn-coverage.sh /payload/perf-buildid /payload/pbid-churn \\
	"\$LAB_BLOCK_DIR/coverage-bpf" $children || rc=1
exit \$rc
GUEST
fi
rc=0
"$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$work/disk" -t 420 "$kname" "$work/payload" \
	"$work/console.log" >/dev/null || rc=$?
# What the run measured; vm-run.sh's status decides.
tr -d '\r' <"$work/console.log" | grep '^churn-coverage' || true
exit "$rc"
