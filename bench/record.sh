#!/usr/bin/env bash
# record.sh [-n ROUNDS] [-S STORMS] [-F HZ] [-m PAGES] [-s STORM_SECS] [-w WORK_MB]
#           [-r RATE] [-t "STALL_MS..."] [-G "CALL-GRAPH ARGS"] [-o OUT.md]
#
# What recording costs, perf-buildid record against perf record --buildid-mmap, with the same
# frequency (-F) and ring buffer size (-m), the tools alternating in one invocation:
#  - overhead: a fixed amount of CPU work (sha256 over /dev/zero, two pipelines at once so that
#    both cores are busy), its wall time under each profiler against its time alone, as
#    measured by /usr/bin/time inside the profiler. Each round runs none, one profiler, none,
#    the other, none, back to back, and a profiler's run is compared with the mean of the two
#    runs around it (so a steady drift of the machine cancels); then the median over rounds.
#    The machine's speed wanders by about 10% from one run to the next, so there are many short
#    rounds rather than a few long ones, and the tools are compared round by round: the
#    difference of their two overheads in each round, its median, and in how many rounds
#    perf-buildid cost no more than perf.
#    Beside it, the recorder's own CPU time: the whole command's user+sys less the workload's;
#  - mmap storm: bench/src/mmap_storm maps 1000 small distinct ELF files executable in a loop
#    for a few seconds; the records lost (the sum of PERF_RECORD_LOST's counts) and the MMAP2
#    records kept, both counted by `perf report -D` on each tool's file. Two kinds:
#    - as fast as it goes: its pace, and so the load on the profiler, varies from run to run;
#      a loss comes only when the host happens to hold off the drain;
#    - stalled: the same load for both (RATE mmaps per second), and the recorder stopped for
#      each STALL_MS in turn after every stall_every ms it runs (bench/src/stall), a drain
#      held off as a loaded host holds it off. What a ring loses then depends on the room it
#      leaves for the gap, so the lengths run from one both tools survive to one neither does.
# -G gives both tools the same call-graph arguments for every run, storms included (default:
# -g for the CPU work, none for the storms), e.g. -G "--call-graph dwarf".
# Writes OUT.md (default build/bench/record.md) and the raw measurements beside it (.tsv).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$BENCH_ROOT
runs=15 storms=5 freq=4000 pages=128 out=$root/build/bench/record.md storm_secs=3 work_mb=500
rate=40000 stall_lengths="40 70 100" stall_every=200 cg_args=""
while getopts "n:S:F:m:o:s:w:r:t:G:" o; do
	case $o in
	n) runs=$OPTARG ;;
	S) storms=$OPTARG ;;
	F) freq=$OPTARG ;;
	m) pages=$OPTARG ;;
	o) out=$OPTARG ;;
	s) storm_secs=$OPTARG ;;
	w) work_mb=$OPTARG ;;
	r) rate=$OPTARG ;;
	t) stall_lengths=$OPTARG ;;
	G) cg_args=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[[ $rate =~ ^[1-9][0-9]*$ ]] || die "-r: not a rate in mmaps per second: $rate"
read -r -a stalls <<<"$stall_lengths"
[ "${#stalls[@]}" -gt 0 ] || die "-t: no stall length"
for ms in "${stalls[@]}"; do [[ $ms =~ ^[1-9][0-9]*$ ]] || die "-t: not a length in ms: $ms"; done
pbid=$PBID
[ -x "$pbid" ] || die "no $pbid (make perf-buildid)"
cpu_cg=(-g) storm_cg=()
if [ -n "$cg_args" ]; then
	read -r -a cpu_cg <<<"$cg_args"
	storm_cg=("${cpu_cg[@]}")
fi
mkdir -p "$(dirname "$out")"
tsv=${out%.md}.tsv
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-record.XXXXXX")
trap 'rm -rf "$work"' EXIT

gcc -O2 -Wall -Wextra -Werror -o "$work/mmap_storm" "$root/bench/src/mmap_storm.c"
gcc -O2 -Wall -Wextra -Werror -o "$work/stall" "$root/bench/src/stall.c"
make_elves "$work/mmap_storm" "$work/elves"
storm_files=("$work"/elves/e*)

# The CPU-bound work, timed from inside the profiler so that its start-up does not count.
half=$((work_mb / 2))
cat >"$work/cpu.sh" <<EOF
#!/bin/sh
exec /usr/bin/time -f '%e %U %S' -o "\$1" sh -c '
	head -c ${half}M /dev/zero | sha256sum >/dev/null &
	head -c ${half}M /dev/zero | sha256sum >/dev/null
	wait'
EOF
chmod +x "$work/cpu.sh"

# run_cpu ROUND SLOT TOOL: one timed run of the CPU work under TOOL (or none), the SLOT-th
# (1 to 5) of its round.
run_cpu() {
	local round=$1 slot=$2 tool=$3 t=$work/t total=$work/total
	local timed=(/usr/bin/time -f '%U %S' -o "$total")
	case $tool in
	none) "${timed[@]}" "$work/cpu.sh" "$t" ;;
	perf) "${timed[@]}" perf record -q "${cpu_cg[@]}" --buildid-mmap -F "$freq" -m "$pages" -o "$work/p.data" -- "$work/cpu.sh" "$t" ;;
	perf-buildid) "${timed[@]}" "$pbid" record -q "${cpu_cg[@]}" -F "$freq" -m "$pages" -o "$work/p.data" -- "$work/cpu.sh" "$t" ;;
	esac >/dev/null 2>"$work/err" || { cat "$work/err" >&2; die "$tool: the CPU workload failed"; }
	# $t: the workload's wall, user and sys; $total: the whole command's user and sys.
	local wall own cores
	read -r wall own cores < <(awk 'NR == FNR { w = $1; wc = $2 + $3; next }
		{ print w, $1 + $2 - wc, (w > 0 ? wc / w : 0) }' "$t" "$total")
	printf 'cpu\t%s\t%s\t\t\t%s\t%s\t%s\t%s\n' "$tool" "$wall" "$round" "$own" "$slot" "$cores" >>"$tsv"
}

# run_storm KIND TOOL [STALL_MS]: one storm (KIND storm, or stalled for STALL_MS) under TOOL;
# counts from perf's own reading of the file.
run_storm() {
	local kind=$1 tool=$2 ms=${3:-} f=$work/s.data maps lost mmap2 rec storm
	case $tool in
	perf) rec=(perf record -q --buildid-mmap) ;;
	perf-buildid) rec=("$pbid" record -q) ;;
	esac
	rec+=("${storm_cg[@]}" -F "$freq" -m "$pages" -o "$f" --)
	storm=("$work/mmap_storm" "$storm_secs" "${storm_files[@]}")
	if [ "$kind" = stalled ]; then
		rec=("$work/stall" "$ms" "$stall_every" "${rec[@]}")
		storm=("$work/mmap_storm" -r "$rate" "$storm_secs" "${storm_files[@]}")
	fi
	"${rec[@]}" "${storm[@]}" >"$work/storm.out" 2>"$work/err" ||
		{ cat "$work/err" >&2; die "$tool: the mmap storm ($kind) failed"; }
	maps=$(awk '/^mmaps / {print $2}' "$work/storm.out")
	perf report -D -i "$f" >"$work/dump" 2>/dev/null || die "perf cannot read $tool's storm file"
	lost=$(awk '/PERF_RECORD_LOST:/ { sub(/.*lost:/, ""); n += $1 } END { print n + 0 }' "$work/dump")
	mmap2=$(grep -c 'PERF_RECORD_MMAP2 ' "$work/dump" || true)
	printf '%s\t%s\t%s\t%s\t%s\t\t\t\t\t%s\n' "$kind" "$tool" "$maps" "$lost" "$mmap2" "$ms" >>"$tsv"
}

# pair R: sets tools to the two profilers in the order of round (or storm) R; which goes first
# alternates from one to the next.
pair() { if [ $(($1 % 2)) = 1 ]; then tools=(perf perf-buildid); else tools=(perf-buildid perf); fi; }

printf 'bench\ttool\tvalue\tlost\tmmap2\tround\trecorder_cpu\tslot\tcores\tstall_ms\n' >"$tsv"
for ((r = 1; r <= runs; r++)); do
	echo "bench: record round $r of $runs" >&2
	pair "$r"
	order=(none "${tools[0]}" none "${tools[1]}" none)
	for ((s = 0; s < 5; s++)); do run_cpu "$r" "$((s + 1))" "${order[s]}"; done
done
for ((r = 1; r <= storms; r++)); do
	echo "bench: mmap storm $r of $storms" >&2
	pair "$r"
	for t in "${tools[@]}"; do run_storm storm "$t"; done
done
for ((r = 1; r <= storms; r++)); do
	pair "$r"
	for ms in "${stalls[@]}"; do
		echo "bench: mmap storm stalled for $ms ms, $r of $storms" >&2
		for t in "${tools[@]}"; do run_storm stalled "$t" "$ms"; done
	done
done

awk -F '\t' -v cg="$cg_args" -v runs="$runs" -v storms="$storms" -v freq="$freq" -v pages="$pages" -v mb="$work_mb" -v ss="$storm_secs" \
	-v rate="$rate" -v stalls="$stall_lengths" -v every="$stall_every" \
	"$BENCH_AWK_STATS"'
$1 == "cpu" {
	t[$2] = t[$2] " " $3; at[$6, $8] = $3
	if ($2 == "none") cores = cores " " $9
	else { own[$2] = own[$2] " " $7; slot[$2, $6] = $8 }
}
$1 == "storm" || $1 == "stalled" {
	k = $1 SUBSEP $10 SUBSEP $2
	maps[k] = maps[k] " " $3; lost[k] = lost[k] " " $4; mm[k] = mm[k] " " $5; lsum[k] += $4
	if ($4 > 0) lruns[k]++
}
END {
	printf "CPU-bound work (sha256 of %s MB in two pipelines; alone it kept %.2f cores busy, median),\n", mb, median(cores)
	printf "%d rounds of none, one profiler, none, the other, none, back to back. Overhead: the median over\n", runs
	print "rounds of the workload wall time with the profiler against the mean of the two runs without one"
	print "around it (range in parentheses). Recorder CPU: user+sys seconds of the profiler itself, median"
	print "(range)."
	print ""
	print "| profiler | workload s (median) | overhead | recorder CPU s |"
	print "| --- | ---: | ---: | ---: |"
	printf "| none | %.2f | – | – |\n", median(t["none"])
	n = split("perf perf-buildid", tools, " ")
	for (i = 1; i <= n; i++) {
		ratios = ""
		for (r = 1; r <= runs; r++) {
			k = slot[tools[i], r]
			base = (at[r, k - 1] + at[r, k + 1]) / 2
			ov[i, r] = base > 0 ? (at[r, k] / base - 1) * 100 : 0
			ratios = ratios " " sprintf("%+.1f", ov[i, r])
		}
		printf "| %s | %.2f | %+.1f%% (%s%%) | %.2f (%s) |\n", tools[i], median(t[tools[i]]), median(ratios), spread(ratios), median(own[tools[i]]), spread(own[tools[i]])
	}
	diffs = ""; lower = 0
	for (r = 1; r <= runs; r++) {
		diffs = diffs " " sprintf("%+.1f", ov[2, r] - ov[1, r])
		if (ov[2, r] <= ov[1, r]) lower++
	}
	printf "\nperf-buildid'"'"'s overhead less perf'"'"'s, round by round: median %+.1f points (%s); perf-buildid\n", median(diffs), spread(diffs)
	printf "cost the workload no more than perf in %d of %d rounds.\n", lower, runs
	printf "\nmmap storms (%d s over 1000 small ELF files), %d runs of each kind per profiler, medians; lost =\n", ss, storms
	print "records the kernel dropped. As fast as it goes: the storm runs at the pace it reaches beside"
	printf "each profiler. Stalled: %d mmaps/s for both, the recorder stopped for the time given after\n", rate
	printf "every %d ms it runs, as a loaded host holds off a drain.\n", every
	print ""
	print "| storm | profiler | mmaps made | MMAP2 records kept | records lost (median) | runs with a loss | records lost (all runs) |"
	print "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
	nk = split(stalls, ms, " ")
	for (j = 0; j <= nk; j++)  # 0: the storm as fast as it goes
		for (i = 1; i <= n; i++) {
			k = (j == 0 ? "storm" SUBSEP : "stalled" SUBSEP ms[j]) SUBSEP tools[i]
			printf "| %s | %s | %d | %d | %d | %d of %d | %d |\n", (j == 0 ? "as fast as it goes" : "stalled " ms[j] " ms"), tools[i], median(maps[k]), median(mm[k]), median(lost[k]), lruns[k], storms, lsum[k]
		}
	if (cg == "")
		printf "\nBoth with -F %d -m %d, perf with --buildid-mmap; -g for the CPU-bound work, not for the storms.\n", freq, pages
	else
		printf "\nBoth with -F %d -m %d %s, perf with --buildid-mmap, for the CPU-bound work and the storms.\n", freq, pages, cg
}' "$tsv" >"$out"
cat "$out"
