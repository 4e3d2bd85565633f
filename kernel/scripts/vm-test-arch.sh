#!/usr/bin/env bash
# vm-test-arch.sh KERNEL...: the selftests on kernels of the lab's other architectures
# (LAB_ARCHES), each cross-compiled and booted in its own QEMU, must give the verdicts of the
# same kernel on the first architecture (x86_64: 5.10-buildid for 5.10-buildid-i386, 5.10 for
# 5.10-i386), case by case, but for the cases listed with their reasons in
# tools/testing/selftests/perf_events/expected-differences-ARCH.txt, and for a kernel of another
# page size than its architecture's first also expected-differences-ARCH-PAGES.txt. The
# reference runs first when it has no verdicts yet, or older ones than a selftest source. Exits
# 1 when any kernel fails.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -gt 0 ] || die "usage: vm-test-arch.sh KERNEL..."
mapfile -t arches < <(lab_keys LAB_ARCHES)
rc=0
for k in "$@"; do
	parse_name "$k"
	[ "$K_ARCH" != "${arches[0]}" ] || die "$k is a ${arches[0]} kernel: make vm-test KERNEL=$k"
	# The reference: the name without its architecture and page size (a variant follows them).
	ref=${k/-"$K_ARCH"-"$K_PAGES"/}
	ref=${ref/-"$K_ARCH"/}
	st=$LAB_ROOT/tools/testing/selftests/perf_events
	lists=("$st/expected-differences-$K_ARCH.txt")
	[ ! -f "$st/expected-differences-$K_ARCH-$K_PAGES.txt" ] ||
		lists+=("$st/expected-differences-$K_ARCH-$K_PAGES.txt")
	refv=$LAB_ROOT/build/selftests/$ref/verdicts.txt
	if [ ! -s "$refv" ] || [ -n "$(find "$st" -newer "$refv" -print -quit)" ]; then
		"$LAB_ROOT/kernel/scripts/vm-test.sh" "$ref" || rc=1
	fi
	"$LAB_ROOT/kernel/scripts/vm-test.sh" "$k" &&
		"$LAB_ROOT/kernel/scripts/compare-verdicts.sh" "$ref" "$k" <(cat "${lists[@]}") || rc=1
done
exit "$rc"
