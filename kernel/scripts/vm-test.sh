#!/usr/bin/env bash
# vm-test.sh KERNEL: build the perf_events selftests against KERNEL's tree and exported headers,
# boot KERNEL in QEMU, run them, and print one summary line:
#   vm-test KERNEL: pass N fail N skip N (Ts)
# The summary also goes to $LAB_SUMMARY (a file) when that is set. Exit status is vm-run.sh's,
# or 1 when any test failed or no test ran.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
parse_name "$kname"
t0=$(date +%s)

image=$("$LAB_ROOT/kernel/scripts/build.sh" "$kname")
imgdir=$(dirname "$image")
src=$(cat "$imgdir/source")
st=$LAB_ROOT/tools/testing/selftests/perf_events
# VMTEST_TAG names a separate output dir (mutation runs); two runs on one dir are serialized.
out=$LAB_ROOT/build/selftests/$kname${VMTEST_TAG:+-$VMTEST_TAG}
mkdir -p "$(dirname "$out")"
exec 8>"$out.lock"
flock 8
rm -rf "$out"
mkdir -p "$out/obj" "$out/payload/perf_events" "$out/disk"

progress "vm-test $kname" "build selftests"
mkvars=(KSRC="$src" KHDR_INCLUDES="-isystem $imgdir/include" OUTPUT="$out/obj" LDFLAGS=-static)
[ "$K_ARCH" = arm64 ] && mkvars+=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
make -s --no-print-directory -C "$st" "${mkvars[@]}" all >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; die "selftests failed to build against $kname"; }
make -s --no-print-directory -C "$st" "${mkvars[@]}" install INSTALL_PATH="$out/payload/perf_events" \
	>>"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; die "selftest install failed"; }
progs=$(make -s --no-print-directory -C "$st" "${mkvars[@]}" emit_tests | sed -n 's/^perf_events://p')
[ -n "$progs" ] || die "no selftests listed by emit_tests"
cp -a "$out/payload/perf_events" "$out/disk/perf_events"

{
	echo 'cd /payload/perf_events'
	echo '[ -n "$LAB_BLOCK_DIR" ] && export BUILDID_BLOCK_DIR=$LAB_BLOCK_DIR/perf_events'
	echo 'rc=0'
	for p in $progs; do
		echo "echo '# selftests: perf_events: $p'"
		echo "./$p; r=\$?"
		# 4 is KSFT_SKIP: every case skipped is not a failure
		echo "echo \"# exit=\$r $p\"; [ \$r = 0 ] || [ \$r = 4 ] || rc=1"
	done
	echo 'exit $rc'
} >"$out/payload/run.sh"

set +e
"$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$out/disk" -t "${LAB_VM_TIMEOUT:-180}" "$kname" \
	"$out/payload" "$out/console.log"
vrc=$?
set -e

# Per-test verdicts, "<program> <verdict> <test>", for comparing kernels (check.sh compares
# 5.10-buildid with 6.12).
awk '/^# selftests: perf_events: /{prog=$4}
	/^not ok [0-9]+ /{ $1=$2=$3=""; print prog, "FAIL", substr($0, 4); next }
	/^ok [0-9]+ .*# SKIP/{ sub(/^ok [0-9]+ /, ""); print prog, "SKIP", $0; next }
	/^ok [0-9]+ /{ $1=$2=""; print prog, "PASS", substr($0, 3) }' "$out/console.log" \
	>"$out/verdicts.txt"
pass=$(grep -cE '^ok [0-9]+ ' "$out/console.log" | tr -d ' ' || true)
skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$out/console.log" || true)
fail=$(grep -cE '^not ok [0-9]+ ' "$out/console.log" || true)
pass=$((pass - skip))
line="vm-test $kname: pass $pass fail $fail skip $skip ($(( $(date +%s) - t0 ))s)"
[ "$vrc" = 0 ] || line="$line; VM FAILED (exit $vrc)"
echo "$line"
[ -n "${LAB_SUMMARY:-}" ] && echo "$line" >>"$LAB_SUMMARY"
[ "$vrc" = 0 ] || exit "$vrc"
[ $((pass + fail + skip)) -gt 0 ] || { echo "lab: no test ran on $kname" >&2; exit 1; }
[ "$fail" = 0 ] || exit 1
exit 0
