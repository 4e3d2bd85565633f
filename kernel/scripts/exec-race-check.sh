#!/usr/bin/env bash
# exec-race-check.sh [SECONDS] [ROUNDS]: the vmacache fix (kernel/patches/linux-5.10-fixes)
# against the race it fixes, with vm-exec-race.sh. Pristine 5.10 must Oops in vmacache_find()
# within ROUNDS boots of SECONDS each (default 30 s, 8 rounds), or the check cannot tell the
# fix from luck; 5.10-fixes must then stay clean for ROUNDS boots of SECONDS each.
set -euo pipefail
. "$(dirname "$0")/common.sh"
seconds=${1:-30}
rounds=${2:-8}
run=$LAB_ROOT/kernel/scripts/vm-exec-race.sh
console() { echo "$LAB_ROOT/build/vm-exec-race/$1/console.log"; }

# round KERNEL: vm-exec-race.sh's exit status, its output kept in the kernel's directory.
round() {
	local rc=0
	"$run" "$1" "$seconds" >"$LAB_ROOT/build/vm-exec-race/$1.out" 2>&1 || rc=$?
	return "$rc"
}
mkdir -p "$LAB_ROOT/build/vm-exec-race"

oops=0
for ((i = 1; i <= rounds; i++)); do
	rc=0
	round 5.10 || rc=$?
	if [ "$rc" = 2 ] && grep -q 'RIP: .*vmacache_find' "$(console 5.10)"; then
		echo "ok - pristine 5.10, round $i: Oops in vmacache_find(), the race is there"
		oops=1
		break
	fi
	echo "# pristine 5.10, round $i: exit $rc, no Oops in vmacache_find()"
	[ "$rc" = 0 ] || [ "$rc" = 2 ] || { sed 's/^/#   /' "$LAB_ROOT/build/vm-exec-race/5.10.out"; exit 1; }
done
if [ "$oops" = 0 ]; then
	echo "not ok - pristine 5.10: no Oops in $rounds rounds of ${seconds}s: nothing to tell the fix from luck"
	exit 1
fi
for ((i = 1; i <= rounds; i++)); do
	rc=0
	round 5.10-fixes || rc=$?
	if [ "$rc" != 0 ]; then
		echo "not ok - 5.10-fixes, round $i: exit $rc"
		sed 's/^/#   /' "$LAB_ROOT/build/vm-exec-race/5.10-fixes.out"
		exit 1
	fi
	echo "ok - 5.10-fixes, round $i: clean, $(grep -m1 '^pbid-exec-race:' "$(console 5.10-fixes)" | cut -d' ' -f2-)"
done
