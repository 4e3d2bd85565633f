#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-buildid record takes perf record's command line. First every option that
# `perf record --list-opts` prints: with a plausible value, it either records (exit 0, a file
# perf reads, the command run) or is refused before anything runs (exit 2, one line naming
# it); never a crash, never another program run in the command's place. Then what the options
# do, read back with Linux perf: -a and -C with a command, -p and -t lists, several -e with :u
# and :k, --call-graph fp and dwarf (perf unwinds the dwarf samples up to main), and the error
# lines of --call-graph lbr and of a hardware event on a machine without a PMU for it.
# Prints TAP; 77 (skip) without perf or perf_event_open.
#
# Usage: record-options.sh PERF-BUILDID WORKDIR
set -euo pipefail
PB=$1
W=$2
PERF=${PERF:-/usr/bin/perf}
rm -rf "$W"
mkdir -p "$W"
cd "$W"

n=0 failed=0
check() {
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)) && echo "not ok $n - $d"; fi
}

if [ ! -x "$PERF" ]; then
	echo "1..0 # SKIP $PERF not installed"
	exit 77
fi
if ! "$PB" record -q -F 99 -o probe.data -- true 2>probe.err; then
	echo "1..0 # SKIP $(head -1 probe.err)"
	exit 77
fi

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# A CPU-bound program without frame pointers: dwarf unwinding is the only way to its callers.
cat >spin.c <<'EOF'
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void middle(unsigned long n) { leaf(n); sink++; }
int main(int argc, char **argv) { middle(argc > 1 ? strtoul(argv[1], 0, 10) : 1000000000UL); return 0; }
EOF
gcc -O2 -fomit-frame-pointer -o spin spin.c

# A process and a thread id for -p and -t.
sleep 600 &
sleeper=$!
pids+=("$sleeper")

# The value each of perf's options that take one gets here.
value_of() {
	case $1 in
	--event | --switch-output-event) echo cpu-clock ;;
	--pid | --tid) echo "$sleeper" ;;
	--cpu) echo 0 ;;
	--count) echo 100000 ;;
	--output) echo opt.data ;;
	--freq) echo 999 ;;
	--mmap-pages) echo 64 ;;
	--mmap-flush | --realtime | --switch-max-files | --num-thread-synthesize) echo 2 ;;
	--call-graph) echo dwarf ;;
	--filter) echo 'ip > 0' ;;
	--cgroup) echo / ;;
	--delay) echo 10 ;;
	--uid) echo 0 ;;
	--branch-filter) echo any ;;
	--clockid) echo monotonic ;;
	--proc-map-timeout) echo 500 ;;
	--clang-path) echo /usr/bin/clang ;;
	--clang-opt) echo -O2 ;;
	--vmlinux) echo /dev/null ;;
	--affinity) echo node ;;
	--max-size) echo 1M ;;
	--control) echo fd:0 ;;
	--synth) echo all ;;
	*) return 1 ;;
	esac
}

"$PERF" record --list-opts 2>/dev/null | tr ' ' '\n' | grep -- '^--' >opts.txt || true
total=$(wc -l <opts.txt)
accepted=() refused=()
start=$SECONDS
while read -r opt; do
	rm -f opt.data ran
	args=(-q -o opt.data "$opt")
	if [ "$opt" = --output ]; then args=(-q "$opt"); fi
	if v=$(value_of "$opt"); then args+=("$v"); fi
	# The command leaves a mark: it ran, and it is what ran.
	rc=0
	"$PB" record "${args[@]}" -- touch ran >opt.out 2>opt.err || rc=$?
	if [ "$rc" -eq 0 ] && [ -e ran ] && "$PERF" evlist -i opt.data >/dev/null 2>&1; then
		accepted+=("$opt")
	elif [ "$rc" -eq 2 ] && [ ! -e ran ] &&
		[ "$(head -1 opt.err)" = "perf-buildid record: $opt is not supported" ]; then
		refused+=("$opt")
	else
		check "record $opt ${v:-}: exit 0 with a file, or exit 2 naming it (got $rc: $(head -1 opt.err))" false
	fi
	v=
done <opts.txt
echo "# $total options of perf record: ${#accepted[@]} work, ${#refused[@]} refused ($((SECONDS - start)) s)"
echo "# work: ${accepted[*]}"
echo "# refused: ${refused[*]}"
check "perf record --list-opts printed its options" [ "$total" -gt 60 ]
check "every one of perf record's options works or is refused by name" \
	[ $((${#accepted[@]} + ${#refused[@]})) -eq "$total" ]

# --- what the options do, read back with perf ---
evlist() { "$PERF" evlist -v -i "$1" 2>/dev/null; }
export PERF
export -f evlist

# -a with a command: every process, for as long as the command runs.
./spin 4000000000 &
bg=$!
pids+=("$bg")
t0=$SECONDS
"$PB" record -q -a -g -o a.data -- sleep 1
check "-a -- sleep 1 ends with the command" [ $((SECONDS - t0)) -lt 10 ]
check "-a -- CMD samples another process (spin)" \
	bash -c '"$1" script -F comm -i a.data 2>/dev/null | grep -qE "^ *spin *\$"' _ "$PERF"
check "-a -g: callchains and CPU in the samples" \
	bash -c 'evlist a.data | grep -q "sample_type: IP|TID|TIME|CALLCHAIN|CPU|PERIOD"' _
kill "$bg"

# -C 0 with a command: CPU 0 only.
taskset -c 0 ./spin 4000000000 &
pids+=("$!")
"$PB" record -q -C 0 -o c.data -- sleep 1
"$PERF" script -F cpu -i c.data 2>/dev/null | sort -u >c.cpus
check "-C 0 -- CMD: samples from CPU 0 only" [ "$(tr -d ' []' <c.cpus)" = 000 ]
check "-C 0 -- CMD: the spinner on CPU 0 is sampled" \
	bash -c '"$1" script -F comm -i c.data 2>/dev/null | grep -qE "^ *spin *\$"' _ "$PERF"
kill "${pids[-1]}"

# -p a,b and -t a,b without a command: until both have gone (each spins for about a second).
./spin 2000000000 &
p1=$!
./spin 2000000000 &
p2=$!
pids+=("$p1" "$p2")
sleep 0.2
"$PB" record -q -p "$p1,$p2" -o p.data
"$PERF" script -F pid -i p.data 2>/dev/null | sort -u | tr -d ' ' >p.pids
check "-p a,b: samples of both, until both exited" \
	[ "$(cat p.pids)" = "$(printf '%s\n' "$p1" "$p2" | sort -u)" ]
./spin 2000000000 &
t1=$!
./spin 2000000000 &
t2=$!
pids+=("$t1" "$t2")
sleep 0.2
"$PB" record -q -t "$t1,$t2" -o t.data
"$PERF" script -F tid -i t.data 2>/dev/null | sort -u | tr -d ' ' >t.tids
check "-t a,b: samples of both threads" [ "$(cat t.tids)" = "$(printf '%s\n' "$t1" "$t2" | sort -u)" ]
check "-t: per thread, not inherited (as perf)" bash -c '! evlist t.data | grep -q "inherit: 1"' _

# Several -e, comma lists and :u/:k: one attr each, named as perf names them.
"$PB" record -q -e cpu-clock:u,task-clock:k -e page-faults -o e.data -- ./spin 100000000
evlist e.data >e.evlist
check "three events in the file, in order" \
	[ "$(cut -d: -f1-2 <e.evlist | sed 's/: type//')" = "$(printf 'cpu-clock:u\ntask-clock:k\npage-faults')" ]
check ":u sets exclude_kernel" bash -c 'grep "^cpu-clock:u" e.evlist | grep -q "exclude_kernel: 1"'
check ":u leaves the user side" bash -c '! grep "^cpu-clock:u" e.evlist | grep -q "exclude_user"'
check ":k sets exclude_user" bash -c 'grep "^task-clock:k" e.evlist | grep -q "exclude_user: 1"'
check "several events: every record names its event by ID" \
	bash -c '[ "$(grep -c "sample_type: IP|TID|TIME|ID|PERIOD" e.evlist)" -eq 3 ]'
"$PERF" report --stdio -i e.data >e.report 2>/dev/null
check "perf report reads the events apart" \
	bash -c 'grep -q "of event .cpu-clock:u." e.report && grep -q "of event .page-faults." e.report'

# --call-graph fp and dwarf.
"$PB" record -q --call-graph fp -o fp.data -- ./spin 100000000
check "--call-graph fp: CALLCHAIN, no user stack" \
	bash -c 'evlist fp.data | grep -q "sample_type: IP|TID|TIME|CALLCHAIN|PERIOD," &&
		! evlist fp.data | grep -q STACK_USER' _
"$PB" record -q --call-graph dwarf,4093 -o dw.data -- ./spin 100000000
evlist dw.data >dw.evlist
check "--call-graph dwarf: perf's regs, stack and exclude_callchain_user" \
	bash -c 'grep -q "CALLCHAIN|PERIOD|REGS_USER|STACK_USER" dw.evlist &&
		grep -q "sample_regs_user: 0xff0fff, sample_stack_user: 4096" dw.evlist &&
		grep -q "exclude_callchain_user: 1" dw.evlist'
"$PERF" script -i dw.data 2>/dev/null >dw.script
check "perf script unwinds our dwarf samples: leaf <- middle <- main" \
	bash -c 'grep -A2 " leaf+" dw.script | grep -A1 " middle+" | grep -q " main+"'

# The error paths of a machine without a PMU (this VM has none: its hardware events do not
# open): one line each, and on a machine with one, the recording itself.
rc=0
"$PB" record -q --call-graph lbr -o lbr.data -- true 2>lbr.err || rc=$?
check "--call-graph lbr without LBR: exit 1, one line naming LBR" \
	bash -c '[ "$1" -eq 1 ] && [ "$(wc -l <lbr.err)" -eq 1 ] && grep -q "lbr.*LBR" lbr.err' _ "$rc"
rc=0
"$PB" record -q -e instructions -o ins.data -- true 2>ins.err || rc=$?
if "$PERF" stat -e instructions -x, true 2>&1 | grep -q '^[0-9]*,,instructions'; then
	echo "# this machine counts instructions: -e instructions must record"
	check "-e instructions records" [ "$rc" -eq 0 ]
else
	echo "# no PMU for instructions here: $(cat ins.err)"
	check "-e instructions without a PMU: exit 1, one line naming what works here" \
		bash -c '[ "$1" -eq 1 ] && [ "$(wc -l <ins.err)" -eq 1 ] &&
			grep -q "instructions: this machine cannot count it.*events that work here: cpu-clock" ins.err' _ "$rc"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
