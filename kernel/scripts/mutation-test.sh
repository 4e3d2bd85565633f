#!/usr/bin/env bash
# mutation-test.sh [NAME...]: prove that the selftests catch each way the series could be
# broken. Each kernel/mutations/NAME.patch is applied on top of the series (LAB_SERIES_DIR),
# 5.10-buildid is rebuilt (incrementally) and the selftests run on it: at least one case must
# fail, through a test verdict and not through a crash or a hang. Prints, per mutation, the
# cases that caught it. Exits non-zero when a mutation survives, no longer applies, or breaks
# the VM in another way.
set -euo pipefail
. "$(dirname "$0")/common.sh"
mdir=$LAB_ROOT/kernel/mutations
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for p in "$mdir"/*.patch; do names+=("$(basename "$p" .patch)"); done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lab-mutation.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
report=()
for m in "${names[@]}"; do
	[ -f "$mdir/$m.patch" ] || die "no mutation $m (kernel/mutations/$m.patch)"
	sdir=$work/$m
	mkdir -p "$sdir"
	for p in $(series_files); do cp "$p" "$sdir/"; done
	cp "$mdir/$m.patch" "$sdir/9999-mutation-$m.patch"
	{ cat "$SERIES_DIR/series"; echo "9999-mutation-$m.patch"; } >"$sdir/series"
	progress "mutation $m" "$(sed -n 's/^Subject: \[PATCH\] MUTATION: //p' "$mdir/$m.patch")"
	set +e
	LAB_SERIES_DIR=$sdir VMTEST_TAG=mutation-$m "$LAB_ROOT/kernel/scripts/vm-test.sh" 5.10-buildid \
		>"$work/$m.log" 2>&1
	rc=$?
	set -e
	verdicts=$LAB_ROOT/build/selftests/5.10-buildid-mutation-$m/verdicts.txt
	caught=$(awk '$2 == "FAIL" { print $3 }' "$verdicts" 2>/dev/null | paste -sd' ' || true)
	if grep -q 'git am failed' "$work/$m.log"; then
		report+=("STALE     $m: no longer applies on top of the series; refresh the patch")
		bad=1
	elif [ "$rc" = 1 ] && [ -n "$caught" ]; then
		report+=("CAUGHT    $m by $(wc -w <<<"$caught") case(s): $caught")
	elif [ "$rc" = 0 ]; then
		report+=("SURVIVED  $m: every selftest passed on the broken kernel")
		bad=1
	else
		report+=("BROKE-VM  $m: vm-test exit $rc ($(grep 'lab: ' "$work/$m.log" | head -1))")
		bad=1
	fi
done
echo
printf '%s\n' "${report[@]}"
exit $bad
