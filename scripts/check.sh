#!/usr/bin/env bash
# make check: every test of the project. Runs each step even when an earlier one failed, then
# prints one line per step and per kernel, and a closing "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. kernel/scripts/common.sh

summary=$(mktemp)
export LAB_SUMMARY=$summary
# Each step's output is kept while it runs; a failed step leaves an excerpt of it here, printed
# under the summary, so that the end of a long log (all that a CI page may show) says which
# test failed and how.
steplogs=$(mktemp -d)
trap 'rm -rf "$steplogs" "$summary"' EXIT
results=()
npass=0 nfail=0

# The lines of a failed step's log that name a failure, the last FAIL_EXCERPT_LINES of them
# (its last lines when none does).
FAIL_EXCERPT_LINES=20
fail_excerpt() {
	local log=$1 lines
	# ctest's lines of passing tests whose names say Error or Failed are not failures.
	lines=$(grep -E -a 'FAIL|Failed|not ok|[Ee]rror[: ]|ERROR|Sanitizer|runtime error|BUG:|Oops|WARNING:|Timeout|timed out' \
		"$log" | grep -a -v -E ' Passed +[0-9.]+ sec$' | tail -n "$FAIL_EXCERPT_LINES")
	[ -n "$lines" ] || lines=$(tail -n "$FAIL_EXCERPT_LINES" "$log")
	printf '%s\n' "$lines"
}

step() {
	local name=$1; shift
	local t0 rc log
	t0=$(date +%s)
	progress check "== $name"
	log=$(mktemp -p "$steplogs" step.XXXXXX)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	local dt=$(( $(date +%s) - t0 ))
	if [ "$rc" = 0 ]; then
		results+=("PASS  $name (${dt}s)")
		npass=$((npass + 1))
		rm -f "$log"
	else
		results+=("FAIL  $name (exit $rc, ${dt}s)")
		nfail=$((nfail + 1))
		{ echo "---- $name (exit $rc): ----"; fail_excerpt "$log"; } >"$log.failed"
		rm -f "$log"
	fi
}

# A full disk fails most steps at once, each with its own confusing error (a truncated .deb, a
# linker error, a guest that cannot write its log): say it once, before anything runs. A warm
# check grows the clone's build/ to about 4 GiB and writes about 1 GiB to the cache and to
# $TMPDIR; a cold cache grows to about 20 GiB.
CHECK_MIN_FREE_GB=${CHECK_MIN_FREE_GB:-8}
low_space=0 seen=" "
for dir in "$PWD" "$CACHE" "${TMPDIR:-/tmp}"; do
	read -r avail mnt < <(df -Pk -- "$dir" | awk 'NR == 2 { print $4, $6 }')
	case $seen in *" $mnt "*) continue ;; esac
	seen="$seen$mnt "
	if [ "$((avail / 1024 / 1024))" -lt "$CHECK_MIN_FREE_GB" ]; then
		echo "check: $((avail / 1024)) MiB free on $mnt (holding $dir), under the" \
			"$CHECK_MIN_FREE_GB GiB a check needs (CHECK_MIN_FREE_GB)" >&2
		low_space=1
	fi
done
if [ "$low_space" != 0 ]; then
	echo "check: nothing run; free some space first" >&2
	exit 2
fi

step "perf-buildid unit and interop tests" make --no-print-directory unit-test
step "install-deps: Debian 11 apt sources derived from sample configurations" \
	scripts/tests/debian-sources-test.sh
step "include/uapi/linux/perf_event.h equals the kernel series' result" scripts/uapi-header.sh --check
step "perf-buildid unit tests under ASan and UBSan" make --no-print-directory asan-test

# The second lane: steps that build and test on the host, none of them timed or recording the
# whole machine, run beside the kernel and VM steps below, whose guests keep one core busy
# while the other waits on them. Their output is printed, and their lines added to the
# summary, when the lane ends (before the VM steps that race the recorder, and the bench
# smoke, which need the machine to themselves).
lane_log=$(mktemp) lane_results=$(mktemp)
host_lane() {
	renice -n 10 "$BASHPID" >/dev/null
	results=() npass=0 nfail=0
	step "make deb: built, lintian, installed with dpkg --root" \
		bash -c 'DEB_BUILD_OPTIONS=nocheck make --no-print-directory deb >/dev/null && scripts/tests/deb-test.sh build/deb'
	step "Debian 11 root: perf-buildid built, unit tests, .deb built and installed" \
		make --no-print-directory debian11
	step "perf-buildid fuzz smoke: each libFuzzer target on the seed corpus, a few seconds" \
		make --no-print-directory fuzz-smoke
	printf '%s\n' "${results[@]}" >"$lane_results"
}
# Niced, so that the guests' timeouts and the VM steps' own work come first when the two lanes
# want more than the machine has (a cold check builds kernels in the first lane).
host_lane >"$lane_log" 2>&1 </dev/null &
lane_pid=$!
lane_wait() {
	wait "$lane_pid"
	progress check "== the second lane's output"
	cat "$lane_log"
	local line
	while IFS= read -r line; do
		results+=("$line")
		case $line in
		PASS*) npass=$((npass + 1)) ;;
		*) nfail=$((nfail + 1)) ;;
		esac
	done <"$lane_results"
	# A lane that died before writing its lines is a failure too.
	[ -s "$lane_results" ] || { results+=("FAIL  the second lane wrote no result"); nfail=$((nfail + 1)); }
	rm -f "$lane_log" "$lane_results"
}

step "kernel series and the base's fixes: git am, checkpatch, build after each patch" \
	make --no-print-directory series-check
step "kernel series: arm64 cross-build" make --no-print-directory kernel-crossbuild
step "module ABI: every genksyms CRC unchanged (lab modversions kernels, pristine and patched)" \
	kernel/scripts/abi-check.sh lab
step "module ABI: Debian 11's config, W=1 C=1, every CRC equal to Debian's shipped Module.symvers" \
	kernel/scripts/abi-check.sh debian
step "lab self-test: failure, hang, kernel warning, early death each detected" \
	kernel/scripts/lab-selftest.sh 5.10
# The kernels of each VM step are those LAB_KERNELS (kernel/scripts/common.sh) marks for it.
mapfile -t kernels < <(lab_kernels vm-test)
for k in "${kernels[@]}"; do
	step "vm-test $k" make --no-print-directory vm-test KERNEL="$k"
done
# The same tests must give the same verdicts on the backport and on upstream, except for the
# cases listed, with their reasons, in expected-differences.txt (the series' own limits); a
# listed difference that no longer shows up fails too, so the list stays true.
step "selftest verdicts: 5.10-buildid equals 6.12 but for the listed differences" \
	kernel/scripts/compare-verdicts.sh 5.10-buildid 6.12 \
	tools/testing/selftests/perf_events/expected-differences.txt
step "vm-test 5.10-rt-buildid (Debian's PREEMPT_RT, lockdep): clean, the verdicts of 5.10-buildid" \
	make --no-print-directory vm-test-rt
mapfile -t kernels < <(lab_kernels vm-test-arch)
for k in "${kernels[@]}"; do
	step "vm-test $k ($(parse_name "$k" && arch_field qemu)): x86_64's verdicts but for the listed differences" \
		make --no-print-directory vm-test-arch ARCH_KERNELS="$k"
done
mapfile -t kernels < <(lab_kernels vm-perf)
for k in "${kernels[@]}"; do
	step "perf-buildid record in the VM on $k" kernel/scripts/vm-perf.sh "$k"
done
step "perf-buildid BPF program on pristine 5.10: readelf's ids at the mappings' offsets" \
	kernel/scripts/vm-bpf.sh 5.10
step "kernel modules in 5.10-buildid: each recorded with its own build ID, named by it on the host" \
	kernel/scripts/vm-modules.sh 5.10-buildid
# make stress runs it for as long as asked, on any kernel; this is its smoke run.
step "stress smoke: 45 s of buildid_stress on 5.10-buildid-kasan: no wrong build ID, clean console" \
	kernel/scripts/vm-stress.sh 5.10-buildid-kasan 45
# The tools series' bisection (git am, checkpatch --strict, perf built after each of its 10
# patches: about 10 min cold) is make perf-5.10-series-check, kept out of check for check's
# cold time; perf-5.10 below builds the whole series.
step "perf-5.10: Debian 11's perf with the tools series" make --no-print-directory perf-5.10
step "perf-5.10 on 5.10-buildid: record --buildid-mmap, readers, interop with perf 6.1 and perf-buildid" \
	kernel/scripts/vm-perf-5.10.sh 5.10-buildid
step "perf-5.10 on pristine 5.10: --buildid-mmap refused, the old file kept" \
	kernel/scripts/vm-perf-5.10.sh 5.10
# The steps from here on race short-lived processes in the guest against the recorder (a
# child's file replaced 10 ms into its run), and a TCG guest gets less done per millisecond
# on a busy host: the second lane has ended before them.
lane_wait
step "fleet round trip: record --archive in 5.10-buildid, served by debuginfod, reported on the host" \
	kernel/scripts/vm-archive.sh 5.10-buildid
step "short-lived children with deleted and replaced files on 5.10-buildid: all ids right" \
	kernel/scripts/vm-coverage.sh 5.10-buildid
step "the same on pristine 5.10: file path only, BPF alone >= 99%, both >= 99%, none wrong" \
	kernel/scripts/vm-coverage.sh 5.10
step "bench smoke: each benchmark once on its smallest input (figures not kept)" \
	make --no-print-directory bench-smoke

echo
echo "==== make check summary ($(( $(date +%s) - LAB_T0 ))s) ===="
printf '%s\n' "${results[@]}"
cat "$summary"
rm -f "$summary"
if [ "$nfail" != 0 ]; then
	echo
	echo "==== what the failed steps printed last ===="
	# In the order they failed (the files' times), the lane's among the others.
	find "$steplogs" -name '*.failed' -printf '%T@ %p\n' | sort -n | cut -d' ' -f2- |
		while IFS= read -r f; do cat "$f"; done
fi
rm -rf "$steplogs"
echo "check: $npass passed, $nfail failed"
[ "$nfail" = 0 ]
