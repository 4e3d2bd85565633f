#!/usr/bin/env bash
# vm-test.sh KERNEL: build the perf_events selftests against KERNEL's tree and exported headers,
# boot KERNEL in QEMU, run them twice, and print one summary line:
#   vm-test KERNEL: pass N fail N skip N, cold cache: same verdicts (Ts)
# The first run is from the initramfs. The second runs the copy on the ext4 disk with every
# fixture evicted from the page cache before each case (BUILDID_COLD=1): its verdicts must be
# the same, or some case passed only because an earlier one had cached its file.
# The kernel's name says what it must do (BUILDID_EXPECT): the series' limits on *-buildid*,
# the feature on a base that has it upstream (6.12), nothing on pristine 5.10 (its cases skip).
# BUILDID_LAB=1 tells the tests that the VM provides the ext4 disk, 2 MiB huge pages and root, so
# none may skip for want of them.
# The summary also goes to $LAB_SUMMARY (a file) when that is set. Exit status is vm-run.sh's,
# or 1 when any test failed, no test ran, or the two runs disagree.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=$1
parse_name "$kname"
t0=$(date +%s)
expect=""
[ "$K_PATCHED" = 1 ] && expect=series
[ "$K_UPSTREAM" = - ] || expect=feature

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
selftests_build "$src" "$imgdir" "$out"
# The programs' byte order (EI_DATA: 1 little, 2 big) is the architecture's.
data=$(od -An -j5 -N1 -tu1 "$out/payload/perf_events/buildid_attr" | tr -d ' ')
want=$(arch_field endian)
[ "$data" = "$([ "$want" = big ] && echo 2 || echo 1)" ] ||
	die "the selftests built for $kname are not $want-endian (EI_DATA $data)"
mapfile -t progs < <(make -s --no-print-directory -C "$st" "${SELFTESTS_MAKEVARS[@]}" emit_tests |
	sed -n 's/^perf_events://p')
[ "${#progs[@]}" -gt 0 ] || die "no selftests listed by emit_tests"
cp -a "$out/payload/perf_events" "$out/disk/perf_events"

# Each program gets the suite's time limit (settings: timeout=N; kselftest's runner default 45
# s otherwise), as kselftest's own runner gives it: a program that hangs fails with a reason
# instead of taking the whole VM's time.
tmo=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$st/settings" 2>/dev/null || true)
tmo=${tmo:-45}
cp "$LAB_ROOT/kernel/scripts/vm-test-guest.sh" "$out/payload/"
cat >"$out/payload/run.sh" <<GUEST
LAB_TIMEOUT=$tmo LAB_EXPECT=$expect sh ./vm-test-guest.sh ${progs[*]}
GUEST

set +e
LAB_CMDLINE="hugepagesz=2M hugepages=4 ${LAB_CMDLINE:-}" \
	"$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$out/disk" -t "${LAB_VM_TIMEOUT:-240}" "$kname" \
	"$out/payload" "$out/console.log"
vrc=$?
set -e

# Per-case verdicts, "<program> <verdict> <case>[ # <skip reason>]", one file per run, for
# comparing kernels (check.sh compares 5.10-buildid with 6.12) and the two runs. The case name
# comes from the harness' RUN line: 5.10's harness leaves it out of "ok N # SKIP" lines.
awk -v out="$out" '/^# lab run: /{ file = out "/verdicts" ($4 == "cold" ? "-cold" : "") ".txt" }
	/^# selftests: perf_events: /{ prog = $4 }
	/^#  RUN /{ name = $3 }
	/^not ok [0-9]+ /{ print prog, "FAIL", name >file; next }
	/^ok [0-9]+ .*# SKIP/{ sub(/.*# SKIP */, ""); print prog, "SKIP", name, "#", $0 >file; next }
	/^ok [0-9]+ /{ print prog, "PASS", name >file }' "$out/console.log"
touch "$out/verdicts.txt" "$out/verdicts-cold.txt"
count() { awk -v v="$1" '$2 == v' "$out/verdicts.txt" | wc -l; }
pass=$(count PASS) fail=$(count FAIL) skip=$(count SKIP)
if cmp -s "$out/verdicts.txt" "$out/verdicts-cold.txt"; then
	cold="cold cache: same verdicts"
else
	cold="cold cache: DIFFERENT verdicts"
	diff -u "$out/verdicts.txt" "$out/verdicts-cold.txt" >&2 || true
fi
line="vm-test $kname: pass $pass fail $fail skip $skip, $cold"
# HIGHMEM kernels: the page cache the tests parse must have been in high memory (at least half of
# the files read back from a dropped cache; vm-test-guest.sh measures it).
highmem_ok=1
if grep -qx 'CONFIG_HIGHMEM=y' "$imgdir/config"; then
	read -r htotal hread hfell < <(sed -n 's/^# lab highmem: HighTotal=\([0-9]*\) read=\([0-9]*\) fell=\(-*[0-9]*\).*/\1 \2 \3/p' \
		"$out/console.log" | tr -d '\r') || true
	if [ -n "${hread:-}" ] && [ "$htotal" -gt 0 ] && [ $((hfell * 2)) -ge "$hread" ]; then
		line="$line, page cache in HIGHMEM ($hfell of $hread KiB read, ${htotal} KiB high)"
	else
		line="$line, page cache NOT in HIGHMEM (HighTotal ${htotal:-?} KiB, ${hfell:-?} of ${hread:-?} KiB read)"
		highmem_ok=0
	fi
fi
line="$line ($(( $(date +%s) - t0 ))s)"
[ "$vrc" = 0 ] || line="$line; VM FAILED (exit $vrc)"
echo "$line"
[ -n "${LAB_SUMMARY:-}" ] && echo "$line" >>"$LAB_SUMMARY"
[ "$vrc" = 0 ] || exit "$vrc"
[ $((pass + fail + skip)) -gt 0 ] || { echo "lab: no test ran on $kname" >&2; exit 1; }
[ "$fail" = 0 ] || exit 1
[ "$highmem_ok" = 1 ] || exit 1
cmp -s "$out/verdicts.txt" "$out/verdicts-cold.txt" || exit 1
exit 0
