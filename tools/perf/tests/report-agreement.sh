#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# report-agreement.sh PERF_BUILDID WORKLOAD OUTDIR
#
# perf-buildid report's numbers against perf 6.1's on the same files: a system-wide recording
# with callchains (-a -g: kernel frames, the idle task and two processes of the workload), once
# recorded by perf and once by perf-buildid. For each sort key list and each call-graph view,
# both report the file, and report-agreement.py compares every entry's children and self
# percentages and every branch of its call graph. The comparison covers the workload and the
# idle task (--comms on both sides): the other processes of the machine run Debian's
# libraries, whose aliased symbols (read, __read, __libc_read) the two tools name differently.
# Neither side shows inlined frames (--no-inline on perf's, the default on ours).
set -euo pipefail

PB=$1
WORKLOAD=$2
OUT=$3
PERF=${PERF:-perf}
HERE=$(cd "$(dirname "$0")" && pwd)
# A build root without perf (the Debian 11 package build) has nothing to compare with.
for tool in "$PERF" python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
# shellcheck source=perf-record.sh
. "$HERE/perf-record.sh"

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
# The workload under a name of its own (and its library beside it): other programs on the
# machine, other tests' workloads among them, must not fall under --comms.
cp "$WORKLOAD" agree-workload
cp "$(dirname "$WORKLOAD")"/libpbidwork*.so .
WORKLOAD=$OUT/agree-workload

fail=0
run_workload='"$0" 1500 & "$0" 1500 & wait'
if ! perf_record -N --buildid-mmap -a -g -F 999 -o perf.data -- sh -c "$run_workload" "$WORKLOAD" \
	>record-perf.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 record-perf.log)"
	exit 1
fi
if ! "$PB" record -a -g -F 999 -o ours.data -- sh -c "$run_workload" "$WORKLOAD" \
	>record-ours.log 2>&1; then
	echo "FAIL: perf-buildid record: $(tail -3 record-ours.log)"
	exit 1
fi

views=(
	""                          # children, graph, caller: perf's default on a -g file
	"-g graph,0.5,callee"
	"-g fractal"
	"-g folded"
	"-g folded,0.5,callee"
	"-g flat"
	"--no-children"             # graph, callee
	"--no-children -g caller"
	"--no-children -g folded"
	"--no-children -g none"
	"--percent-limit 2"
)
total_one=0
total_entries=0
total_branches=0
worst=0.00
# perf_split DATA: the entries of perf's report of DATA by symbol alone, without --comms, that
# stand for what perf-buildid shows as one entry, one a line (report-agreement.py --perf-split):
# - a function perf split in two: more entries of a name than files with a function of that
#   name (its report by dso,sym gives those);
# - functions of one name in one file (the kernel's static lruvec_stat_mod_folio.constprop.0,
#   eleven of them): perf keeps them apart by address, perf-buildid by name does not.
perf_split() {
	local cells='NF >= 2 && $NF ~ /^\[[.k]\] / { sub(/ +$/, "", $NF); print $(NF - 1) "\t" $NF }'
	"$PERF" report -i "$1" --stdio -n --no-inline --sort dso,sym -g none 2>/dev/null |
		grep -v '^#' | awk -F '  +' "$cells" >split-dso-sym.txt
	"$PERF" report -i "$1" --stdio -n --no-inline --sort sym -g none 2>/dev/null |
		grep -v '^#' | awk -F '  +' "$cells" |
		awk -F '\t' 'NR == FNR {
				if (++pair[$0] == 1) files[$2]++
				else twice[$2] = 1
				next
			}
			{ entries[$2]++ }
			END {
				for (n in entries)
					if (twice[n] || entries[n] > files[n]) print n
			}' split-dso-sym.txt -
}

for data in perf.data ours.data; do
	perf_split "$data" >"${data%.data}-split.txt"
	for sort in sym dso,sym comm,dso,sym; do
		split=()
		[ "$sort" != sym ] || split=(--perf-split "${data%.data}-split.txt")
		for view in "${views[@]}"; do
			name="${data%.data}-${sort//,/-}-$(printf '%s' "${view:-default}" | tr -c 'a-z0-9' '_')"
			# shellcheck disable=SC2086 # the view is a list of words
			"$PERF" report -i "$data" --stdio -n --no-inline --comms agree-workload,swapper \
				--sort "$sort" $view >"$name.perf" 2>"$name.perf.err"
			# shellcheck disable=SC2086
			"$PB" report -i "$data" --no-debuginfod --comms agree-workload,swapper \
				--sort "$sort" $view >"$name.ours" 2>"$name.ours.err"
			if "$HERE/report-agreement.py" "$name.perf" "$name.ours" "${split[@]}" >"$name.diff"; then
				verdict=ok
			else
				verdict=FAIL
				fail=1
			fi
			summary=$(tail -1 "$name.diff")
			echo "$verdict: $data --sort $sort ${view:-(default)}: $summary"
			[ "$verdict" = ok ] || head -20 "$name.diff" | sed 's/^/    /'
			read -r e b d < <(sed -E 's/agreement: ([0-9]+) entries, ([0-9]+) branches.*difference ([0-9.]+);.*/\1 \2 \3/' <<<"$summary")
			one=$(grep -c '^one side only' "$name.diff" || true)
			total_one=$((total_one + one))
			total_entries=$((total_entries + e))
			total_branches=$((total_branches + b))
			worst=$(awk -v a="$worst" -v b="$d" 'BEGIN { printf "%.2f", (b > a ? b : a) }')
		done
	done
done
# Pipe mode: perf's stream read from standard input by both. perf decides the children view
# before it sees a sample and leaves it off on a pipe, so the views compared are without it.
if ! "$PERF" record -N --buildid-mmap -a -g -F 999 -o - -- sh -c "$run_workload" "$WORKLOAD" \
	>pipe.data 2>record-pipe.log; then
	echo "FAIL: perf record -o -: $(tail -3 record-pipe.log)"
	exit 1
fi
for view in "--no-children -g graph,0.5,caller" "--no-children -g folded,0.5,callee" \
	"--no-children -g fractal"; do
	name="pipe-$(printf '%s' "$view" | tr -c 'a-z0-9' '_')"
	# shellcheck disable=SC2086 # the view is a list of words
	"$PERF" report -i - --stdio -n --no-inline --comms agree-workload,swapper \
		--sort comm,dso,sym $view <pipe.data >"$name.perf" 2>"$name.perf.err"
	# shellcheck disable=SC2086
	"$PB" report -i - --no-debuginfod --comms agree-workload,swapper \
		--sort comm,dso,sym $view <pipe.data >"$name.ours" 2>"$name.ours.err"
	if "$HERE/report-agreement.py" "$name.perf" "$name.ours" >"$name.diff"; then
		echo "ok: pipe mode, -i - $view: $(tail -1 "$name.diff")"
	else
		echo "FAIL: pipe mode, -i - $view: $(tail -1 "$name.diff")"
		head -20 "$name.diff" | sed 's/^/    /'
		fail=1
	fi
done

# The flame graph of perf-buildid's recording in headless Chromium: the widths of the commands
# at the root, the hover text, zoom and search that flamegraph-browser.sh checks, expected from
# report's own folded stacks of the same file.
"$PB" report -i ours.data --no-debuginfod --format folded >ours.folded
"$PB" report -i ours.data --no-debuginfod --format flamegraph -o ours.svg 2>/dev/null
awk '
function commas(n,   s) {
	s = sprintf("%d", n)
	while (s ~ /[0-9][0-9][0-9][0-9]/)
		sub(/[0-9][0-9][0-9]([,]|$)/, ",&", s)
	return s
}
{
	count = $NF
	sub(/ [0-9]+$/, "")
	total += count
	n = split($0, f, ";")
	root[f[1]] += count
	for (i = 2; i <= n; i++)
		if (f[i] == "pbid_work_spin") {
			spin += count
			break
		}
}
END {
	for (r in root)
		if (top == "" || root[r] > root[top])
			top = r
	for (r in root)
		if (root[r] * 200 >= total)  # 0.5% and more: wide enough to be drawn and found
			printf "frame\t%s\t%.4f\n", r, root[r] / total
	printf "hover\t%s\t%s (user, %s samples, %.2f%%)\n", top, top, commas(root[top]),
		100 * root[top] / total
	printf "zoom\t%s\n", top
	printf "search\t^pbid_work_spin$\t%.2f\n", 100 * spin / total
}' ours.folded >ours.expect
if "$HERE/flamegraph-browser.sh" ours.svg ours.png ours.expect >flamegraph.log 2>&1; then
	echo "ok: the flame graph of ours.data in Chromium: $(grep -c . ours.expect) checks (screenshot $OUT/ours.png)"
else
	echo "FAIL: the flame graph of ours.data in Chromium"
	sed 's/^/    /' ours.expect flamegraph.log
	fail=1
fi

echo "agreement with perf: $total_entries entries and $total_branches call-graph branches compared; largest difference $worst; $total_one shown by one side only (each below 0.5%)"
exit "$fail"
