#!/usr/bin/env bash
# lab-selftest.sh [KERNEL]: the VM runner must turn every kind of trouble into its own non-zero
# exit status. Boots KERNEL (default 5.10) with payloads that fail, hang, put a kernel warning
# into the kernel log, and die without finishing, and checks each exit status (vm-run.sh's
# table). A real WARN_ON compiled into the kernel was checked the same way by hand (see
# Documentation/lab.md); this keeps the runner honest on every make check.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=${1:-5.10}
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT

payload() {
	mkdir -p "$work/$1"
	printf '%s\n' "$2" >"$work/$1/run.sh"
}
payload pass 'echo all good; exit 0'
payload fail 'echo "not ok 1 a failing test"; exit 1'
payload hang 'echo about to hang; sleep 600'
payload warn 'echo "<4>WARNING: CPU: 0 PID: 1 at lab-selftest.c:1 injected+0x0/0x0" >/dev/kmsg; exit 0'
payload death 'echo dying early; reboot -f'

bad=0
export LAB_NO_KEEP=1  # the failures below are wanted
expect() {
	local name=$1 want=$2 got
	shift 2
	set +e
	"$LAB_ROOT/kernel/scripts/vm-run.sh" "$@" "$kname" "$work/$name" "$work/$name.log" \
		>/dev/null 2>"$work/$name.err"
	got=$?
	set -e
	if [ "$got" = "$want" ]; then
		echo "ok - $name: vm-run exit $got ($(grep -m1 'lab: FAIL' "$work/$name.err" || echo clean))"
	else
		echo "not ok - $name: vm-run exit $got, expected $want"
		sed 's/^/#   /' "$work/$name.err"
		bad=1
	fi
}
expect pass 0
expect fail 1
expect warn 2
expect hang 3 -t 8
expect death 4
exit $bad
