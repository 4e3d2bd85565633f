#!/usr/bin/env bash
# read.sh [-n RUNS] [-s SIZES_MB] [-R REPORT_MAX_MB] [-c COMMANDS] [-d DATADIR] [-o OUT.md]
#
# How fast perf-buildid reads perf.data against Linux perf, on the same files in one run.
#
# The files are recorded here, once, by Linux perf (`perf record -a -g --buildid-mmap
# --max-size`) under bench/workload.sh, one per size in SIZES_MB, plus one recorded by
# `perf-buildid record -a -g`; they are kept in DATADIR between runs. Each file is read into the
# page cache first, then every command pair runs RUNS times, the two tools alternating and
# swapping order each round, under bench/src/runstat. The table gives the median wall time, CPU
# time, peak RSS and MB/s of each side and the ratios perf/perf-buildid. `report` runs only on
# files up to REPORT_MAX_MB (perf report takes minutes per GB). COMMANDS (default: all) names the
# rows to measure, from buildid-list, maps, script, report-flat, report-children, report-folded
# and report-dwarf; every file is recorded and its shape given all the same. buildid-list-z and
# report-flat-z are buildid-list and report-flat on a compressed recording and on its
# uncompressed copy (the same records): `perf record -z -a -g --buildid-mmap` for 10 seconds of
# the same load, and perf's own decompression of it (tools/perf/tests/perf-decompress.sh);
# those two files are recorded only when one of the two is named.
#
# The workload is seeded (BENCH_SEED, default 1; kept beside each file as FILE.seed), and a
# second table gives each file's shape: its records by type, the processes and mappings the
# replay finds, and perf's rounds. Two machines' files differ in what the timing of their
# recording let in; the shape says by how much, and a row is compared only with a row of
# like shape.
#
# Writes OUT.md (default build/bench/read.md), the raw measurements beside it (.tsv) and a
# plot of time and peak memory against file size (.svg) when gnuplot is installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$BENCH_ROOT
runs=5 sizes="16 64 256 1024" report_max=300
all_commands="buildid-list maps script report-flat report-children report-folded report-dwarf"
all_commands="$all_commands buildid-list-z report-flat-z"
commands=$all_commands
datadir=${BENCH_DATA:-$CACHE/bench}
seed=${BENCH_SEED:-1}
out=$root/build/bench/read.md
while getopts "n:s:R:c:d:o:" o; do
	case $o in
	n) runs=$OPTARG ;;
	s) sizes=$OPTARG ;;
	R) report_max=$OPTARG ;;
	c) commands=$OPTARG ;;
	d) datadir=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
for c in $commands; do
	case " $all_commands " in
	*" $c "*) ;;
	*) die "-c: no command $c (one of: $all_commands)" ;;
	esac
done
pbid=$PBID
[ -x "$pbid" ] || die "no $pbid (make perf-buildid)"
command -v perf >/dev/null || die "no perf (Debian's linux-perf)"
command -v gcc >/dev/null || die "no gcc (Debian's gcc)"
mkdir -p "$datadir" "$(dirname "$out")"
tsv=${out%.md}.tsv
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-read.XXXXXX")
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -Wextra -Werror -o "$work/runstat" "$root/bench/src/runstat.c"
perf_version=$(perf version | awk '{print $3}')

# record_perf SIZE_MB: a file of about SIZE_MB recorded by perf under the mixed load.
record_perf() {
	local f=$datadir/perf-$1M.data
	if [ ! -s "$f" ]; then
		echo "bench: recording $f" >&2
		perf record -q -a -g --buildid-mmap -F 20000 -m 256 --max-size="$1M" -o "$f.tmp" \
			-- "$root/bench/workload.sh" 3600 "$seed" >/dev/null 2>"$work/record.log" ||
			{ cat "$work/record.log" >&2; die "perf record failed"; }
		echo "$seed" >"$f.seed"
		mv "$f.tmp" "$f"
	fi
	echo "$f"
}

# record_pbid: a file recorded by perf-buildid under the same load, for the same 10 seconds.
record_pbid() {
	local f=$datadir/pbid-10s.data
	if [ ! -s "$f" ]; then
		echo "bench: recording $f" >&2
		"$pbid" record -q -a -g -F 20000 -m 256 -o "$f.tmp" >/dev/null 2>"$work/record.log" &
		local rec=$!
		sleep 1
		"$root/bench/workload.sh" 10 "$seed"
		kill -INT "$rec"
		wait "$rec" || { cat "$work/record.log" >&2; die "perf-buildid record failed"; }
		echo "$seed" >"$f.seed"
		mv "$f.tmp" "$f"
	fi
	echo "$f"
}

# record_dwarf: a file recorded by perf with DWARF call graphs (--call-graph dwarf: each sample
# holds the user registers and 8 KiB of the user stack) under the same load, for 4 seconds.
record_dwarf() {
	local f=$datadir/perf-dwarf-4s.data
	if [ ! -s "$f" ]; then
		echo "bench: recording $f" >&2
		perf record -q -a --call-graph dwarf --buildid-mmap -F 1000 -m 256 -o "$f.tmp" \
			-- "$root/bench/workload.sh" 4 "$seed" >/dev/null 2>"$work/record.log" ||
			{ cat "$work/record.log" >&2; die "perf record --call-graph dwarf failed"; }
		echo "$seed" >"$f.seed"
		mv "$f.tmp" "$f"
	fi
	echo "$f"
}

# record_compressed: a file recorded by perf with compressed records (-z, zstd level 1) under
# the same load for 10 seconds, and beside it (-plain) the same file with every record as perf
# decompresses it, written plainly: the same records, read uncompressed. Sets z_files to both.
record_compressed() {
	local f=$datadir/perf-z-10s.data plain=$datadir/perf-z-10s-plain.data
	if [ ! -s "$f" ]; then
		echo "bench: recording $f" >&2
		rm -f "$plain"
		perf record -q -z -a -g --buildid-mmap -F 20000 -m 256 -o "$f.tmp" \
			-- "$root/bench/workload.sh" 10 "$seed" >/dev/null 2>"$work/record.log" ||
			{ cat "$work/record.log" >&2; die "perf record -z failed"; }
		echo "$seed" >"$f.seed"
		mv "$f.tmp" "$f"
	fi
	if [ ! -s "$plain" ]; then
		echo "bench: decompressing $f into $plain" >&2
		"$root/tools/perf/tests/perf-decompress.sh" "$f" "$plain.tmp" ||
			die "perf-decompress.sh failed on $f"
		cp "$f.seed" "$plain.seed"
		mv "$plain.tmp" "$plain"
	fi
	z_files=("$f" "$plain")
}

# shape FILE: one row of the shape table. Records by type from perf's own count (`perf report
# --stats`: the records of the data section, each type once); processes (those that mapped
# something) and mappings from perf-buildid's replay.
shape() {
	local f=$1 s=-
	[ -s "$f.seed" ] && s=$(cat "$f.seed")
	perf report --stats -i "$f" 2>/dev/null >"$work/stats" ||
		die "perf report --stats failed on $f"
	"$pbid" maps -i "$f" >"$work/maps" || die "perf-buildid maps failed on $f"
	awk -v f="$(basename "$f")" -v s="$s" -v maps="$work/maps" '
	$2 == "events:" && !done[$1]++ { n[$1] = $3 }
	END {
		while ((getline line <maps) > 0) {
			split(line, w, " ")
			mappings++
			if (w[1] != -1) pid[w[1]] = 1
		}
		for (p in pid) procs++
		other = n["TOTAL"] - n["SAMPLE"] - n["MMAP2"] - n["MMAP"] - n["COMM"] - n["FORK"] - n["EXIT"] - n["FINISHED_ROUND"]
		printf "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", f, s, n["TOTAL"],
			n["SAMPLE"], n["MMAP2"] + n["MMAP"], n["COMM"], n["FORK"], n["EXIT"], other, procs, mappings,
			n["FINISHED_ROUND"]
	}' "$work/stats"
}

# measure TOOL CMDNAME FILE ARGV...: one timed run; appends a row to the tsv, with the file's
# size in MB (mb, set by the loop below).
measure() {
	local tool=$1 cmd=$2 file=$3
	shift 3
	if ! "$work/runstat" "$work/time" "$@" >/dev/null 2>"$work/err"; then
		cat "$work/err" >&2
		die "$tool $cmd failed on $file: $*"
	fi
	read -r wall user sys rss <"$work/time"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cmd" "$(basename "$file")" "$mb" "$tool" "$wall" \
		"$(echo "$user + $sys" | bc)" "$rss" >>"$tsv"
}

# pair CMDNAME FILE 'OURS' 'PERFS': RUNS alternating runs of each side (argv given as strings
# of words; no word holds a space), if CMDNAME is one of the COMMANDS.
pair() {
	local cmd=$1 file=$2 ours=$3 theirs=$4 r
	case " $commands " in
	*" $cmd "*) ;;
	*) return 0 ;;
	esac
	cat "$file" >/dev/null
	for ((r = 1; r <= runs; r++)); do
		# shellcheck disable=SC2086
		if [ $((r % 2)) = 1 ]; then
			measure perf-buildid "$cmd" "$file" $ours
			measure perf "$cmd" "$file" $theirs
		else
			measure perf "$cmd" "$file" $theirs
			measure perf-buildid "$cmd" "$file" $ours
		fi
	done
}

# perf report looks in its build-ID cache (buildid.dir, ~/.debug by default) for every DSO, and
# for the kernel's symbols when the recorded kernel is not the running one. report is pointed
# at the same directory (--debug-dir), so that the two look in the same places; both read
# /proc/kallsyms for a recording of the running kernel. The kernel symbols report read are
# said under the tables.
perf_cache=$(perf config buildid.dir 2>/dev/null | sed -n 's/^buildid\.dir=//p')
perf_cache=${perf_cache:-$HOME/.debug}
report="$pbid report"
[ -d "$perf_cache" ] && report="$report --debug-dir $perf_cache"

files=()
for s in $sizes; do files+=("$(record_perf "$s")"); done
files+=("$(record_pbid)")
dwarf_file=$(record_dwarf)
z_files=()
case " $commands " in
*" buildid-list-z "* | *" report-flat-z "*) record_compressed ;;
esac

printf 'command\tfile\tmb\ttool\twall_s\tcpu_s\trss_kb\n' >"$tsv"
{
	echo "| file | seed | records | SAMPLE | MMAP2 | COMM | FORK | EXIT | other | processes | mappings | rounds |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$work/shapes"
for f in "${files[@]}"; do
	shape "$f" >>"$work/shapes"
	mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
	echo "bench: reading $(basename "$f") ($mb MB)" >&2
	pair buildid-list "$f" "$pbid buildid-list -i $f" "perf buildid-list -i $f"
	# maps replays every record; perf's buildid-list replays perf's own files too, but on
	# perf-buildid's it reads the build-ID table alone: no pair for that unlike work.
	case $(basename "$f") in
	pbid-*) ;;
	*) pair maps "$f" "$pbid maps -i $f" "perf buildid-list -i $f" ;;
	esac
	pair script "$f" "$pbid script -i $f" \
		"perf script -i $f --show-mmap-events --show-task-events -F comm,tid,time,period,event,ip,dso"
	if [ "${mb%.*}" -le "$report_max" ]; then
		# Like for like: the same view on both sides. The flat table of the sample's function;
		# the children view with its call graph (perf's default on -g files; --no-inline:
		# neither names inlined frames); folded stacks (perf script through a fold step).
		pair report-flat "$f" "$report --stdio --no-children -g none --sort dso,sym -i $f" \
			"perf report --stdio --no-children -g none --sort dso,sym -i $f"
		pair report-children "$f" "$report --stdio --children --sort comm,dso,sym -i $f" \
			"perf report --stdio --children --no-inline -i $f"
		pair report-folded "$f" "$report --format folded -i $f" \
			"$(dirname "$0")/perf-folded.sh $f"
	fi
done

# The DWARF recording: report unwinds every sample's user stack (libdw, the ELF by build ID),
# perf unwinds it too (its libdw or libunwind); the same view on both sides.
shape "$dwarf_file" >>"$work/shapes"
mb=$(awk -v b="$(stat -c %s "$dwarf_file")" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "bench: reading $(basename "$dwarf_file") ($mb MB)" >&2
pair report-dwarf "$dwarf_file" "$report --stdio --children --sort comm,dso,sym -i $dwarf_file" \
	"perf report --stdio --children --no-inline -i $dwarf_file"

# The compressed recording and its uncompressed copy: the same work on both sides, on each.
# Their shapes must be alike but for the other records: the compressed copy's are
# PERF_RECORD_COMPRESSED, which perf report --stats counts as such.
for f in "${z_files[@]}"; do
	shape "$f" >>"$work/shapes"
	mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
	echo "bench: reading $(basename "$f") ($mb MB)" >&2
	pair buildid-list-z "$f" "$pbid buildid-list -i $f" "perf buildid-list -i $f"
	pair report-flat-z "$f" "$report --stdio --no-children -g none --sort dso,sym -i $f" \
		"perf report --stdio --no-children -g none --sort dso,sym -i $f"
done

awk -F '\t' -v perfv="$perf_version" "$BENCH_AWK_STATS"'
NR == 1 { next }
{
	k = $1 SUBSEP $2 SUBSEP $4
	wall[k] = wall[k] " " $5; cpu[k] = cpu[k] " " $6; rss[k] = rss[k] " " $7; mb[$2] = $3
	if (!(($1 SUBSEP $2) in seen)) { seen[$1 SUBSEP $2] = 1; row[++n] = $1 SUBSEP $2 }
}
END {
	print "| command | file | MB | perf-buildid wall s | perf " perfv " wall s | speed ratio | perf-buildid MB/s | perf-buildid CPU s | perf CPU s | perf-buildid peak RSS MB | perf peak RSS MB | RSS ratio |"
	print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for (i = 1; i <= n; i++) {
		split(row[i], p, SUBSEP); c = p[1]; f = p[2]
		ow = median(wall[c SUBSEP f SUBSEP "perf-buildid"]); pw = median(wall[c SUBSEP f SUBSEP "perf"])
		oc = median(cpu[c SUBSEP f SUBSEP "perf-buildid"]); pc = median(cpu[c SUBSEP f SUBSEP "perf"])
		orss = median(rss[c SUBSEP f SUBSEP "perf-buildid"]) / 1024; prss = median(rss[c SUBSEP f SUBSEP "perf"]) / 1024
		printf "| %s | %s | %.0f | %.3f | %.3f | %.1f× | %.0f | %.3f | %.3f | %.0f | %.0f | %.2f |\n", c, f, mb[f], ow, pw,
			(ow > 0 ? pw / ow : 0), (ow > 0 ? mb[f] / ow : 0), oc, pc, orss, prss, (orss > 0 ? prss / orss : 0)
	}
}' "$tsv" >"$out"
{
	echo
	echo "Each file's shape (the workload's seed; records by type, as perf report --stats counts"
	echo "them; processes that mapped something and their mappings; perf's rounds):"
	echo
	cat "$work/shapes"
	case " $commands " in
	*" report-"*)
		# Which kernel symbols the report rows read, as report's summary names them.
		ks=$($report --stdio --no-children -g none -i "${files[0]}" 2>/dev/null |
			sed -n 's/^#   kernel symbols: //p') || ks="(report failed)"
		echo
		if [ -d "$perf_cache" ]; then
			echo "perf-buildid report ran with \`--debug-dir $perf_cache\` (perf's build-ID cache);"
		else
			echo "perf's build-ID cache ($perf_cache) does not exist;"
		fi
		echo "its kernel symbols on $(basename "${files[0]}"): $ks."
		;;
	esac
} >>"$out"

if command -v gnuplot >/dev/null; then
	# One series per tool and command, medians by file size, perf's own files only.
	plotted=()
	for c in buildid-list script report-flat report-children; do
		grep -q "^$c	" "$tsv" && plotted+=("$c")
		for t in perf-buildid perf; do
			awk -F '\t' -v c="$c" -v t="$t" 'NR > 1 && $1 == c && $4 == t && $2 ~ /^perf-/ { print $3, $5, $7 / 1024 }' "$tsv" |
				sort -n | awk "$BENCH_AWK_STATS"'{ k = $1; w[k] = w[k] " " $2; r[k] = r[k] " " $3; if (!(k in s)) { s[k] = 1; o[++n] = k } }
				END { for (i = 1; i <= n; i++) print o[i], median(w[o[i]]), median(r[o[i]]) }' >"$work/$c-$t.dat"
		done
	done
	# Only the commands measured (-c): a series without points stops gnuplot.
	if [ "${#plotted[@]}" -gt 0 ]; then
		gnuplot 2>"$work/gnuplot.log" <<EOF || { cat "$work/gnuplot.log" >&2; die "gnuplot failed"; }
set terminal svg size 1000,420 dynamic
set output "${out%.md}.svg"
set multiplot layout 1,2 title "perf-buildid and perf $perf_version reading perf.data (median of $runs runs)"
set logscale xy
set xlabel "file size (MB)"
set key left top
set ylabel "wall time (s)"
plot for [c in "${plotted[*]}"] for [t in "perf-buildid perf"] \
	"$work/".c."-".t.".dat" using 1:2 with linespoints title t." ".c
set ylabel "peak RSS (MB)"
plot for [c in "${plotted[*]}"] for [t in "perf-buildid perf"] \
	"$work/".c."-".t.".dat" using 1:3 with linespoints title t." ".c
unset multiplot
EOF
	fi
fi
cat "$out"
