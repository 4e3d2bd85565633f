#!/usr/bin/env bash
# exec-race-check.sh [SECONDS] [ROUNDS]: the vmacache fix (kernel/patches/linux-5.10-fixes)
# against the race it fixes, with vm-exec-race.sh, on the same pristine -Os build of 5.10 with
# and without the fix. ROUNDS boots of SECONDS each (default 8 of 30 s) on pristine 5.10: at
# least one must Oops in vmacache_find(), or the check cannot tell the fix from luck. Then
# ROUNDS boots on 5.10-fixes: every one must be clean. Prints the chance that the unfixed
# kernel, Oopsing at the rate just seen, would have passed as many boots clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"
seconds=${1:-30}
rounds=${2:-8}
run=$LAB_ROOT/kernel/scripts/vm-exec-race.sh
out=$LAB_ROOT/build/vm-exec-race
mkdir -p "$out"

# round KERNEL: vm-exec-race.sh's exit status; its output in $out/KERNEL.out, the console in
# $out/KERNEL.console.
round() {
	local rc=0
	"$run" "$1" "$seconds" "$out/$1.console" >"$out/$1.out" 2>&1 || rc=$?
	return "$rc"
}

oops=0
for ((i = 1; i <= rounds; i++)); do
	rc=0
	round 5.10 || rc=$?
	if [ "$rc" = 2 ] && grep -q 'RIP: .*vmacache_find' "$out/5.10.console"; then
		echo "ok - pristine 5.10, boot $i: Oops in vmacache_find()"
		oops=$((oops + 1))
	elif [ "$rc" = 0 ]; then
		echo "ok - pristine 5.10, boot $i: clean, $(grep -m1 '^pbid-exec-race:' "$out/5.10.console" | cut -d' ' -f2-)"
	else
		echo "not ok - pristine 5.10, boot $i: exit $rc, and no Oops in vmacache_find()"
		sed 's/^/#   /' "$out/5.10.out"
		exit 1
	fi
done
if [ "$oops" = 0 ]; then
	echo "not ok - pristine 5.10: no Oops in $rounds boots of ${seconds}s: nothing to tell the fix from luck"
	exit 1
fi
echo "# pristine 5.10: $oops of $rounds boots of ${seconds}s Oopsed"
for ((i = 1; i <= rounds; i++)); do
	rc=0
	round 5.10-fixes || rc=$?
	if [ "$rc" != 0 ]; then
		echo "not ok - 5.10-fixes, boot $i: exit $rc"
		sed 's/^/#   /' "$out/5.10-fixes.out"
		exit 1
	fi
	echo "ok - 5.10-fixes, boot $i: clean, $(grep -m1 '^pbid-exec-race:' "$out/5.10-fixes.console" | cut -d' ' -f2-)"
done
awk -v k="$oops" -v n="$rounds" 'BEGIN {
	printf "# 5.10-fixes: %d of %d boots clean; ", n, n
	if (k == n) print "every unfixed boot Oopsed"
	else printf "an unfixed kernel Oopsing in %d of %d boots passes them all with probability %.2g\n", k, n, (1 - k / n) ^ n }'
