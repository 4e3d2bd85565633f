#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a while on the checked-in seed corpus.
#   run.sh [--smoke] FUZZ_BIN_DIR SECONDS
# Without --smoke, new inputs are kept in FUZZ_BIN_DIR/corpus/<target> for the next run; with
# --smoke, a throw-away corpus is used. A crash, leak, sanitizer report or timeout fails the
# run; its input is saved as FUZZ_BIN_DIR/artifacts/<target>-crash-... Prints one line per
# target: executions, seconds, result, and a total.
set -euo pipefail

smoke=0
if [ "${1:-}" = "--smoke" ]; then
	smoke=1
	shift
fi
bin_dir=$1
seconds=$2
seeds=$(cd "$(dirname "$0")" && pwd)/corpus
[ -d "$seeds" ] || { echo "run.sh: no seed corpus at $seeds" >&2; exit 1; }
mkdir -p "$bin_dir/artifacts" "$bin_dir/logs"

total=0 failed=0
for target in fuzz_reader fuzz_session fuzz_commands fuzz_report; do
	exe=$bin_dir/$target
	[ -x "$exe" ] || { echo "run.sh: $exe missing" >&2; failed=1; continue; }
	if [ "$smoke" = 1 ]; then
		work=$(mktemp -d)
	else
		work=$bin_dir/corpus/$target
		mkdir -p "$work"
	fi
	log=$bin_dir/logs/$target.log
	rc=0
	# -timeout: a single input taking this long is a hang (the FIFO bug was one).
	"$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=262144 \
		-print_final_stats=1 -artifact_prefix="$bin_dir/artifacts/$target-" \
		"$work" "$seeds" >"$log" 2>&1 || rc=$?
	[ "$smoke" = 1 ] && rm -rf "$work"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	execs=${execs:-0}
	total=$((total + execs))
	if [ "$rc" = 0 ]; then
		echo "$target: $execs executions in ${seconds}s, no finding"
	else
		failed=1
		echo "$target: FAILED (exit $rc) after $execs executions; see $log" >&2
		grep -E 'ERROR:|runtime error:|SUMMARY:|Test unit written' "$log" | head -n 5 >&2 || true
	fi
done
echo "fuzz: $total executions in total"
[ "$failed" = 0 ]
