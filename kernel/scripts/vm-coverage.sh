#!/usr/bin/env bash
# vm-coverage.sh KERNEL [CHILDREN]: how many samples of short-lived children get their build
# id, inside KERNEL (tools/perf/tests/churn-coverage.sh under pbid-churn, files on the guest's
# ext4 disk). No sample may get a wrong id anywhere. With the feature (*-buildid, 6.12) every
# sample must get the right one; on pristine 5.10 the share that the file path reaches is
# printed.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1 children=${2:-150}
parse_name "$kname"
bin=$LAB_ROOT/build/bin
for f in perf-buildid pbid-churn; do
	[ -x "$bin/$f" ] || die "$bin/$f is missing: run make perf-buildid first"
done
min=0
{ [ "$K_PATCHED" = 1 ] || [ "$K_BASE" = 6.12 ]; } && min=100
work=$LAB_ROOT/build/vm-coverage/$kname
rm -rf "$work"
mkdir -p "$work/payload" "$work/disk"
cp "$bin/perf-buildid" "$bin/pbid-churn" "$LAB_ROOT/tools/perf/tests/churn-coverage.sh" \
	"$work/payload/"
cat >"$work/payload/run.sh" <<GUEST
COVERAGE_MIN=$min sh ./churn-coverage.sh /payload/perf-buildid /payload/pbid-churn \\
	"\$LAB_BLOCK_DIR/coverage" $children
GUEST
rc=0
"$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$work/disk" -t 300 "$kname" "$work/payload" \
	"$work/console.log" >/dev/null || rc=$?
# What the run measured; vm-run.sh's status decides.
tr -d '\r' <"$work/console.log" | grep '^churn-coverage' || true
exit "$rc"
