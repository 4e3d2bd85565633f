#!/usr/bin/env bash
# make check: every test of the project. Runs each step even when an earlier one failed, then
# prints one line per step and per kernel, and a closing "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
. kernel/scripts/common.sh

summary=$(mktemp)
export LAB_SUMMARY=$summary
results=()
npass=0 nfail=0

step() {
	local name=$1; shift
	local t0=$(date +%s) rc
	progress check "== $name"
	"$@"
	rc=$?
	local dt=$(( $(date +%s) - t0 ))
	if [ $rc = 0 ]; then
		results+=("PASS  $name (${dt}s)")
		npass=$((npass + 1))
	else
		results+=("FAIL  $name (exit $rc, ${dt}s)")
		nfail=$((nfail + 1))
	fi
}

step "perf-buildid unit and interop tests" make --no-print-directory unit-test
step "kernel series: git am, checkpatch, build after each patch" make --no-print-directory series-check
step "kernel series: arm64 cross-build" make --no-print-directory kernel-crossbuild
step "module ABI: every genksyms CRC unchanged (lab modversions kernels; Debian 11 config vs Debian's Module.symvers)" \
	make --no-print-directory abi-check
step "lab self-test: failure, hang, kernel warning, early death each detected" \
	kernel/scripts/lab-selftest.sh 5.10
for k in 5.10-buildid 5.10 6.12 5.10-buildid-kasan 5.10-rt-buildid; do
	step "vm-test $k" make --no-print-directory vm-test KERNEL=$k
done
# The same tests must give the same verdicts on the backport and on upstream.
same_verdicts() {
	local a=build/selftests/5.10-buildid/verdicts.txt b=build/selftests/6.12/verdicts.txt
	[ -s "$a" ] && [ -s "$b" ] || { echo "no verdicts to compare" >&2; return 1; }
	diff -u "$b" "$a" >&2 && echo "identical verdicts: $(wc -l <"$a") test cases"
}
step "selftest verdicts: 5.10-buildid equals 6.12" same_verdicts
# Debian's RT flavour of the backport must behave as the x86_64 one does.
same_as_5_10_buildid() {
	local a=build/selftests/5.10-buildid/verdicts.txt b=build/selftests/$1/verdicts.txt
	[ -s "$a" ] && [ -s "$b" ] || { echo "no verdicts to compare" >&2; return 1; }
	diff -u "$a" "$b" >&2 && echo "identical verdicts: $(wc -l <"$b") test cases"
}
step "selftest verdicts: 5.10-rt-buildid equals 5.10-buildid" same_as_5_10_buildid 5.10-rt-buildid
for k in 5.10-buildid 5.10; do
	step "perf-buildid record in the VM on $k" kernel/scripts/vm-perf.sh $k
done

echo
echo "==== make check summary ($(( $(date +%s) - LAB_T0 ))s) ===="
printf '%s\n' "${results[@]}"
cat "$summary"
rm -f "$summary"
echo "check: $npass passed, $nfail failed"
[ "$nfail" = 0 ]
