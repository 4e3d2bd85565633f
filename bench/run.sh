#!/usr/bin/env bash
# run.sh [--smoke] [OUTDIR]: every benchmark, and bench/results.md (or OUTDIR/results.md).
#
# Reading (read.sh, perf-buildid against perf on the same files), recording (record.sh: overhead
# and lost records; archive.sh: what record --archive adds) and the kernel's cost per mmap
# (kernel-mmap.sh, in the lab's VMs). --smoke runs each once on the smallest input, into
# build/bench-smoke by default, so that `make check` proves the benchmarks still run; its
# figures mean nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
smoke=0
[ "${1:-}" = --smoke ] && { smoke=1; shift; }
if [ "$smoke" = 1 ]; then
	outdir=${1:-$root/build/bench-smoke}
	read_args=(-n 1 -s 16 -R 16) record_args=(-n 1 -S 1 -s 1 -w 100 -t 70) mmap_args=(-n 2000 -r 3 -b 1)
	dwarf_args=(-n 1 -S 1 -s 1 -w 100 -t 70) archive_args=(-n 1 -s)
else
	outdir=${1:-$root/bench}
	read_args=() record_args=() mmap_args=() dwarf_args=(-n 8 -S 3) archive_args=()
fi
mkdir -p "$outdir" "$root/build/bench"

"$root/bench/read.sh" "${read_args[@]}" -o "$root/build/bench/read.md" >/dev/null
"$root/bench/record.sh" "${record_args[@]}" -o "$root/build/bench/record.md" >/dev/null
"$root/bench/record.sh" "${dwarf_args[@]}" -G "--call-graph dwarf" \
	-o "$root/build/bench/record-dwarf.md" >/dev/null
"$root/bench/archive.sh" "${archive_args[@]}" -o "$root/build/bench/archive.md" >/dev/null \
	2>"$root/build/bench/archive.log" || { cat "$root/build/bench/archive.log" >&2; exit 1; }
"$root/bench/kernel-mmap.sh" "${mmap_args[@]}" -o "$root/build/bench/kernel-mmap.md" >/dev/null
[ -f "$root/build/bench/read.svg" ] && cp "$root/build/bench/read.svg" "$outdir/read.svg"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
	echo "# Benchmarks"
	echo
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) × $cpu, $(free -g | awk '/^Mem:/ {print $2}') GiB,"
	echo "host kernel $(uname -r), perf-buildid $("$root/build/bin/perf-buildid" --version | head -1),"
	echo "$(perf version). Written by \`make bench\` (bench/run.sh); see Documentation/benchmarks.md"
	echo "for what each figure means and how to read the ratios."
	echo
	echo "## Reading perf.data"
	echo
	echo "Median of each side's runs, the two tools alternating in one invocation; speed ratio ="
	echo "perf's wall time / perf-buildid's, RSS ratio = perf's peak RSS / perf-buildid's."
	echo
	cat "$root/build/bench/read.md"
	echo
	echo '![time and peak memory against file size](read.svg)'
	echo
	echo "Commands (\`FILE\` is each file; perf-buildid's are the first of each pair):"
	echo
	echo '```'
	echo "perf-buildid buildid-list -i FILE      perf buildid-list -i FILE"
	echo "perf-buildid maps -i FILE              perf buildid-list -i FILE"
	echo "perf-buildid script -i FILE            perf script -i FILE --show-mmap-events --show-task-events -F comm,tid,time,period,event,ip,dso"
	echo "perf-buildid report --debug-dir ~/.debug --stdio --no-children -g none --sort dso,sym -i FILE"
	echo "                                       perf report --stdio --no-children -g none --sort dso,sym -i FILE"
	echo "perf-buildid report --debug-dir ~/.debug --stdio --children --sort comm,dso,sym -i FILE"
	echo "                                       perf report --stdio --children --no-inline -i FILE"
	echo "perf-buildid report --debug-dir ~/.debug --format folded -i FILE"
	echo "                                       perf script -F comm,ip,sym -i FILE | awk -f bench/fold-perf-script.awk"
	echo "perf-buildid report --debug-dir ~/.debug --stdio --children --sort comm,dso,sym -i perf-dwarf-4s.data"
	echo "                                       perf report --stdio --children --no-inline -i perf-dwarf-4s.data"
	echo '```'
	echo
	echo "buildid-list-z and report-flat-z are buildid-list and report-flat, on both sides, on"
	echo "perf-z-10s.data (\`perf record -z -a -g --buildid-mmap\`: zstd, level 1) and on"
	echo "perf-z-10s-plain.data, the same records as perf decompresses them, written plainly"
	echo "(tools/perf/tests/perf-decompress.sh); MB and MB/s are each file's own size."
	echo
	echo "## Recording"
	echo
	cat "$root/build/bench/record.md"
	echo
	echo "### With DWARF call graphs (--call-graph dwarf on both sides, storms included)"
	echo
	cat "$root/build/bench/record-dwarf.md"
	echo
	echo "### What record --archive DIR adds (bench/archive.sh)"
	echo
	echo "The same recording with and without --archive, fixed work: whole-command CPU time"
	echo "(recorder and load), records lost, files and MB copied; cold: an empty archive, warm:"
	echo "the archive the cold run filled."
	echo
	cat "$root/build/bench/archive.md"
	echo
	echo "## The kernel's cost per mmap (QEMU TCG guests)"
	echo
	cat "$root/build/bench/kernel-mmap.md"
} >"$outdir/results.md"
echo "bench: wrote $outdir/results.md"
