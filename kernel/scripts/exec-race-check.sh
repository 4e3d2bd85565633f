#!/usr/bin/env bash
# exec-race-check.sh [SECONDS] [ROUNDS] [VARIANT]: the vmacache fix
# (kernel/patches/linux-5.10-fixes) against the race it fixes, with vm-exec-race.sh, on the same
# pristine build of 5.10 with and without the fix: 5.10VARIANT and 5.10-fixesVARIANT, VARIANT
# -os (the default: -Os, where the Oops was found) or "" (-O2, as Debian builds). ROUNDS boots of
# SECONDS each (default 8 of 30 s) on the unfixed kernel: at -Os at least one must Oops in
# vmacache_find(), or the check cannot tell the fix from luck (at -O2 the count is reported).
# Then ROUNDS boots with the fix: every one must be clean. Prints the chance that the unfixed
# kernel, Oopsing at the rate just seen, would have passed as many boots clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"
seconds=${1:-30}
rounds=${2:-8}
variant=${3--os}
unfixed=5.10$variant
fixed=5.10-fixes$variant
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
	round "$unfixed" || rc=$?
	if [ "$rc" = 2 ] && grep -q 'RIP: .*vmacache_find' "$out/$unfixed.console"; then
		echo "ok - $unfixed, boot $i: Oops in vmacache_find()"
		oops=$((oops + 1))
	elif [ "$rc" = 0 ]; then
		echo "ok - $unfixed, boot $i: clean, $(grep -m1 '^pbid-exec-race:' "$out/$unfixed.console" | cut -d' ' -f2-)"
	else
		echo "not ok - $unfixed, boot $i: exit $rc, and no Oops in vmacache_find()"
		sed 's/^/#   /' "$out/$unfixed.out"
		exit 1
	fi
done
if [ "$oops" = 0 ] && [ "$variant" = -os ]; then
	echo "not ok - $unfixed: no Oops in $rounds boots of ${seconds}s: nothing to tell the fix from luck"
	exit 1
fi
echo "# $unfixed: $oops of $rounds boots of ${seconds}s Oopsed"
for ((i = 1; i <= rounds; i++)); do
	rc=0
	round "$fixed" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "not ok - $fixed, boot $i: exit $rc"
		sed 's/^/#   /' "$out/$fixed.out"
		exit 1
	fi
	echo "ok - $fixed, boot $i: clean, $(grep -m1 '^pbid-exec-race:' "$out/$fixed.console" | cut -d' ' -f2-)"
done
awk -v k="$oops" -v n="$rounds" -v f="$fixed" 'BEGIN {
	printf "# %s: %d of %d boots clean; ", f, n, n
	if (k == n) print "every unfixed boot Oopsed"
	else printf "an unfixed kernel Oopsing in %d of %d boots passes them all with probability %.2g\n", k, n, (1 - k / n) ^ n }'
