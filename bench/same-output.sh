#!/usr/bin/env bash
# same-output.sh [-k] OLD NEW FILE...: every reading command of two perf-buildid binaries on the
# same perf.data files, compared byte for byte (stdout, stderr and exit status).
#
# For a change that must not alter any output (a restructuring, a faster path): OLD is a build
# of the commit before it, NEW the build after it, FILE the bench's recordings (make bench keeps
# them in the lab's cache, bench/) or any others. Each command runs on the file and, for
# pipe-mode input, on the file through stdin. Prints one line per command and file and a
# closing "N passed, N failed" line; with -k keeps the outputs in a directory it names.
# Exits 1 when any output differs.
set -euo pipefail
keep=0
[ "${1:-}" = -k ] && { keep=1; shift; }
[ $# -ge 3 ] || { echo "usage: same-output.sh [-k] OLD NEW FILE..." >&2; exit 2; }
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "same-output: $b is not an executable" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT

# Each line: a name and the arguments after the binary; FILE is replaced by the input.
commands=(
	"buildid-list|buildid-list -i FILE"
	"buildid-list-H-s|buildid-list -H -s -i FILE"
	"maps|maps -i FILE"
	"maps-json|maps --json -i FILE"
	"script|script -i FILE"
	"script-no-mmap|script --no-mmap -i FILE"
	"dump|dump -i FILE"
	"report|report --stdio --no-debuginfod -i FILE"
	"report-sort|report --stdio --no-debuginfod -s comm,pid,dso,sym -i FILE"
	"buildid-list-pipe|buildid-list -i -"
	"script-pipe|script -i -"
)

# run BIN NAME ARGS FILE OUTPREFIX: one command, its outputs and status in files.
run() {
	local bin=$1 args=$2 file=$3 out=$4 rc=0 a=()
	local words
	read -r -a words <<<"$args"
	for w in "${words[@]}"; do
		if [ "$w" = FILE ]; then a+=("$file"); else a+=("$w"); fi
	done
	if [ "${a[-1]}" = - ]; then
		"$bin" "${a[@]}" <"$file" >"$out.out" 2>"$out.err" || rc=$?
	else
		"$bin" "${a[@]}" >"$out.out" 2>"$out.err" || rc=$?
	fi
	echo "$rc" >"$out.rc"
}

pass=0 fail=0
for f in "$@"; do
	[ -r "$f" ] || { echo "same-output: cannot read $f" >&2; exit 2; }
	base=$(basename "$f")
	for c in "${commands[@]}"; do
		name=${c%%|*} args=${c#*|}
		run "$old" "$args" "$f" "$work/$base.$name.old"
		run "$new" "$args" "$f" "$work/$base.$name.new"
		same=1
		for part in out err rc; do
			cmp -s "$work/$base.$name.old.$part" "$work/$base.$name.new.$part" || same=0
		done
		if [ "$same" = 1 ]; then
			echo "same    $name $base (exit $(cat "$work/$base.$name.new.rc"), $(wc -c <"$work/$base.$name.new.out") bytes)"
			pass=$((pass + 1))
		else
			echo "DIFFERS $name $base"
			diff <(cat "$work/$base.$name.old."{rc,err}) <(cat "$work/$base.$name.new."{rc,err}) | head -5 || true
			cmp "$work/$base.$name.old.out" "$work/$base.$name.new.out" || true
			fail=$((fail + 1))
		fi
	done
done
[ "$keep" = 0 ] || echo "same-output: outputs kept in $work"
echo "same-output: $pass passed, $fail failed"
[ "$fail" = 0 ]
