#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dwarf-callgraph.sh PERF_BUILDID FIXTURES OUTDIR
#
# DWARF call graphs end to end, on FIXTURES/unwind: a program built -O2 -fomit-frame-pointer
# whose hot function sits four calls deep in a shared library (unwind_hot <- unwind_level3 <-
# unwind_level2 <- unwind_level1 <- main).
#   - record -g (frame pointers): the chains break; record --call-graph dwarf: report unwinds
#     the sampled stacks, and at least 95% of the hot samples reach main;
#   - perf 6.1 reports the same chains from the same file;
#   - the library replaced on disk by a rebuild with another build ID: report still unwinds
#     and names every frame from the copy found by build ID (a --debug-dir), and counts the
#     mismatch at the recorded path; without that copy it says why it could not unwind.
set -euo pipefail

PB=$1
FIX=$2
OUT=$3
PERF=${PERF:-perf}
HERE=$(cd "$(dirname "$0")" && pwd)
# A build root without perf (the Debian 11 package build): the guests' smoke test and the
# host's check run this.
for tool in "$PERF" python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
cp -r "$FIX/unwind" app
fail=0
check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		fail=1
	fi
}
# share FILE [REPORT ARGS...]: "reached total" of the hot function's samples whose folded
# stack holds main.
share() {
	local f=$1
	shift
	"$PB" report -i "$f" --no-debuginfod --debug-root '' "$@" --format folded |
		awk '/unwind_hot/ { n += $NF; if ($0 ~ /;main;/) m += $NF } END { print m + 0, n + 0 }'
}
at_least() { awk -v r="$1" -v n="$2" -v pct="$3" 'BEGIN { exit !(n > 0 && r * 100 >= n * pct) }'; }

"$PB" record -g -F 1000 -o fp.data -- ./app/unwind_workload 1000 >fp.log 2>&1
"$PB" record --call-graph dwarf -F 1000 -o dwarf.data -- ./app/unwind_workload 1000 >dwarf.log 2>&1
read -r fp_main fp_all < <(share fp.data)
read -r dw_main dw_all < <(share dwarf.data)
echo "frame pointers: $fp_main of $fp_all hot samples reach main"
echo "dwarf:          $dw_main of $dw_all hot samples reach main"
check "with frame pointers, fewer than half of the hot samples reach main (-fomit-frame-pointer)" \
	awk -v r="$fp_main" -v n="$fp_all" 'BEGIN { exit !(n > 0 && r * 2 < n) }'
check "with --call-graph dwarf, at least 95% of the hot samples reach main" \
	at_least "$dw_main" "$dw_all" 95
"$PB" report -i dwarf.data --no-debuginfod --debug-root '' >report.txt
check "the coverage summary counts the unwinding" \
	grep -q "DWARF unwinding: [0-9]* samples; complete [1-9]" report.txt

for view in "--no-children -g folded,0,callee" "--children -g folded,0,caller" ""; do
	name=perf-$(printf '%s' "${view:-default}" | tr -c 'a-z0-9' '_')
	# shellcheck disable=SC2086 # the view is a list of words
	"$PERF" report -i dwarf.data --stdio -n --no-inline --sort sym $view >"$name.perf" 2>/dev/null
	# shellcheck disable=SC2086
	"$PB" report -i dwarf.data --no-debuginfod --sort sym $view >"$name.ours"
	check "perf 6.1 unwinds the same chains (--sort sym ${view:-default})" \
		"$HERE/report-agreement.py" "$name.perf" "$name.ours"
done

# The library replaced by a rebuild with another build ID, the original kept by build ID.
lib=app/libunwind_hot.so
id=$(readelf -n "$lib" | awk '/Build ID/ { print $3 }')
mkdir -p "debug/.build-id/${id:0:2}"
cp "$lib" "debug/.build-id/${id:0:2}/${id:2}"
cp "$FIX/unwind_v2/libunwind_hot.so" "$lib"
check "the rebuilt library has another build ID" \
	[ "$(readelf -n "$lib" | awk '/Build ID/ { print $3 }')" != "$id" ]
read -r r_main r_all < <(share dwarf.data --debug-dir debug)
echo "replaced library, copy by build ID: $r_main of $r_all hot samples reach main"
check "replaced library: at least 95% still reach main, from the copy found by build ID" \
	at_least "$r_main" "$r_all" 95
"$PB" report -i dwarf.data --no-debuginfod --debug-root '' --debug-dir debug \
	--no-children -g folded,0,callee --sort sym >replaced.txt
check "replaced library: every frame of the hot stacks is named" \
	grep -q "^[0-9.]*% unwind_hot;unwind_level3;unwind_level2;unwind_level1;main" replaced.txt
check "replaced library: the recorded path's mismatch is counted" \
	grep -q "recorded path with another build ID (mismatch, not used): [1-9]" replaced.txt
"$PB" report -i dwarf.data --no-debuginfod --debug-root '' >nocopy.txt
check "without the copy, unwinding stops for want of the ELF, and says so" \
	grep -q "no ELF for the build ID [1-9]" nocopy.txt
exit "$fail"
