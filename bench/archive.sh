#!/usr/bin/env bash
# archive.sh [-n ROUNDS] [-s] [-o OUT.md]: what `perf-buildid record --archive DIR` costs, against
# the same recording without it, the two alternating in one invocation, on three loads of fixed
# work (so that CPU times compare):
#  - storm: bench/src/mmap_storm maps 1000 distinct files of one ELF executable, 40,000 mmaps a
#    second for 3 s: one build ID, 120,000 MMAP2 records, the recorder's per-record cost;
#  - short: 300 short processes of six distinct programs (those of bench/workload.sh), one at
#    a time: the recorder's latency to a new process;
#  - churn: pbid-churn with 150 children, each running a file with a build ID of its own, a
#    third deleted and a third replaced while they run: a new file to copy every few ms.
# Each round records each load three ways: without --archive, with --archive into an empty
# directory (cold: every file copied) and into the directory the cold run filled (warm: nothing
# to copy, every ID already there). Measured by bench/src/runstat: the whole command's CPU time
# (recorder and load; the load's work is fixed) and wall time; from record's summary: the
# records lost, and the files and bytes copied. Medians over ROUNDS. -s (the smoke in make
# check) shrinks each load to a fifth.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$BENCH_ROOT
rounds=5 out=$root/build/bench/archive.md storm_secs=3 short_n=300 churn_n=150
while getopts "n:so:" o; do
	case $o in
	n) rounds=$OPTARG ;;
	s) storm_secs=1 short_n=60 churn_n=30 ;;
	o) out=$OPTARG ;;
	*) echo "usage: archive.sh [-n ROUNDS] [-s] [-o OUT.md]" >&2; exit 2 ;;
	esac
done
[ -x "$PBID" ] || { echo "archive.sh: $PBID missing: run make perf-buildid" >&2; exit 1; }
churn=$root/build/bin/pbid-churn
[ -x "$churn" ] || { echo "archive.sh: $churn missing: run make perf-buildid" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-archive.XXXXXX")
trap 'rm -rf "$work"' EXIT

gcc -O2 -Wall -Wextra -Werror -o "$work/mmap_storm" "$root/bench/src/mmap_storm.c"
gcc -O2 -Wall -Wextra -Werror -o "$work/runstat" "$root/bench/src/runstat.c"
make_elves "$work/mmap_storm" "$work/elves"
cat >"$work/short.sh" <<EOF
#!/bin/sh
. "$root/bench/short-programs.sh"
i=0
while [ "\$i" -lt $short_n ]; do
	short_program \$((i % 6))
	i=\$((i + 1))
done
EOF
chmod +x "$work/short.sh"

# load NAME: the command line of a load.
load() {
	case $1 in
	storm) echo "$work/mmap_storm -r 40000 $storm_secs $work/elves/*" ;;
	short) echo "$work/short.sh" ;;
	churn) echo "$churn $work/churn-files $churn_n" ;;
	esac
}

# one LOAD MODE ROUND: records LOAD once; appends "LOAD MODE CPU WALL LOST FILES BYTES".
one() {
	local name=$1 mode=$2 r=$3 args=() cmd
	case $mode in
	cold) rm -rf "$work/a-$name"; args=(--archive "$work/a-$name") ;;
	warm) args=(--archive "$work/a-$name") ;;
	esac
	rm -rf "$work/churn-files"
	mkdir -p "$work/churn-files"
	read -r -a cmd <<<"$(load "$name")"
	# shellcheck disable=SC2206 # the storm's file list
	cmd=(${cmd[@]})
	"$work/runstat" "$work/stat" "$PBID" record -o "$work/r.data" "${args[@]}" -- "${cmd[@]}" \
		>/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	local lost files=0 bytes=0
	lost=$(sed -n 's/.* samples, \([0-9]*\) lost records.*/\1/p' "$work/err")
	if [ "$mode" != none ]; then
		# "copied N files (X MB) while recording and M (Y MB) after"
		read -r files bytes < <(sed -n 's/.*copied \([0-9]*\) files (\([0-9.]*\) MB) while recording and \([0-9]*\) (\([0-9.]*\) MB) after.*/\1 \2 \3 \4/p' "$work/err" |
			awk '{ printf "%d %d\n", $1 + $3, ($2 + $4) * 1e6 }')
	fi
	read -r wall user sys _ <"$work/stat"
	echo "$name $mode $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }') $wall $lost $files $bytes" \
		>>"$work/tsv"
	echo "round $r $name $mode: cpu $(tail -1 "$work/tsv" | cut -d' ' -f3) s" >&2
}

: >"$work/tsv"
for ((r = 1; r <= rounds; r++)); do
	for name in storm short churn; do
		for mode in none cold warm; do
			one "$name" "$mode" "$r"
		done
	done
done
cp "$work/tsv" "${out%.md}.tsv"

{
	echo "| load | mode | CPU s (median, range) | CPU vs without | wall s | lost records | files copied | MB copied |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	awk "$BENCH_AWK_STATS"'
	{ k = $1 " " $2; cpu[k] = cpu[k] " " $3; wall[k] = wall[k] " " $4; lost[k] = lost[k] " " $5
	  files[k] = files[k] " " $6; bytes[k] = bytes[k] " " $7; if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
	END {
		for (i = 0; i < n; i++) {
			k = order[i]; split(k, p, " "); base = median(cpu[p[1] " none"])
			printf "| %s | %s | %.3f (%s) | %+.1f%% | %.3f | %d | %d | %.2f |\n", p[1],
			       p[2] == "none" ? "without --archive" : p[2], median(cpu[k]), spread(cpu[k]),
			       (median(cpu[k]) / base - 1) * 100, median(wall[k]), median(lost[k]),
			       median(files[k]), median(bytes[k]) / 1e6
		}
	}' "$work/tsv"
} >"$out"
cat "$out"
