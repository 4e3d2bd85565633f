#!/usr/bin/env bash
# kernel-mmap.sh [-n ITERATIONS] [-r ROUNDS] [-b BOOTS] [-o OUT.md] [KERNEL...]
#
# What the feature costs the kernel per mmap. Boots each lab KERNEL (default: 5.10,
# 5.10-buildid, 6.12) BOOTS times, the kernels interleaved, and runs bench/src/mmap_cost on a
# small cached ELF on the guest's ext4 disk: an executable mmap + munmap loop with no consumer,
# with a plain MMAP2 consumer and with a build_id consumer, the modes alternating within the run.
# Writes a markdown table to OUT.md (default build/bench/kernel-mmap.md) and the raw guest
# output beside it.
#
# The lab guests count time in jiffies (4 ms), so a round must last seconds: the default loop
# does. Emulation inflates kernel work, so compare figures only within one run: the added cost
# of build_id (build_id - plain, ns per mmap) on each kernel, and plain on 5.10-buildid against
# plain on 5.10 within the spread of the boots.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

iters=50000 rounds=9 boots=3 out=$LAB_ROOT/build/bench/kernel-mmap.md
while getopts "n:r:b:o:" o; do
	case $o in
	n) iters=$OPTARG ;;
	r) rounds=$OPTARG ;;
	b) boots=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(5.10 5.10-buildid 6.12)

outdir=$(dirname "$out")
raw=${out%.md}.raw
mkdir -p "$outdir"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-mmap.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/payload" "$work/disk"
gcc -O2 -Wall -Wextra -Werror -static -o "$work/disk/mmap_cost" "$LAB_ROOT/bench/src/mmap_cost.c"
readelf -n "$work/disk/mmap_cost" | grep -q 'Build ID' || die "mmap_cost was linked without a build ID"
cat >"$work/payload/run.sh" <<EOF
cd "\$LAB_BLOCK_DIR" || exit 1
echo "clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
./mmap_cost ./mmap_cost $iters $rounds
EOF

: >"$raw"
for ((b = 1; b <= boots; b++)); do
	for k in "${kernels[@]}"; do
		progress "bench kernel-mmap" "$k, boot $b of $boots"
		log=$work/console-$k-$b.log
		if ! "$LAB_ROOT/kernel/scripts/vm-run.sh" -d "$work/disk" -t "${LAB_VM_TIMEOUT:-600}" \
			"$k" "$work/payload" "$log" >/dev/null; then
			cat "$log" >&2
			die "mmap_cost failed on $k (boot $b)"
		fi
		sed -n "s/^\\(mode .*\\|added .*\\|clocksource .*\\)/$k $b \\1/p" "$log" | tr -d '\r' >>"$raw"
	done
done

# Per kernel: the median over boots of each mode's median, and the spread of plain over boots.
awk -v iters="$iters" -v rounds="$rounds" -v boots="$boots" "$BENCH_AWK_STATS"'
$3 == "clocksource" { clk[$1] = $4; next }
$3 == "added" { add[$1 SUBSEP $4] = add[$1 SUBSEP $4] " " $6; next }
$3 == "mode" && $5 == "unsupported" { unsup[$1 SUBSEP $4] = 1; next }
$3 == "mode" { v[$1 SUBSEP $4] = v[$1 SUBSEP $4] " " $6; if (!($1 in seen)) { seen[$1] = 1; order[++nk] = $1 } }
END {
	printf "| kernel | no consumer | plain MMAP2 | build_id | plain − none | build_id − plain | build_id / plain |\n"
	printf "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		n = median(v[k SUBSEP "none"]); p = median(v[k SUBSEP "plain"])
		if ((k SUBSEP "build_id") in unsup) { bid = "refused"; added = "–"; ratio = "–" }
		else {
			b = median(v[k SUBSEP "build_id"]); bid = b; ratio = sprintf("%.2f", b / p)
			added = sprintf("%+d (%s)", median(add[k SUBSEP "build_id-plain"]), spread(add[k SUBSEP "build_id-plain"]))
		}
		printf "| %s | %d | %d (%s) | %s | %+d (%s) | %s | %s |\n", k, n, p, spread(v[k SUBSEP "plain"]), bid,
			median(add[k SUBSEP "plain-none"]), spread(add[k SUBSEP "plain-none"]), added, ratio
	}
	printf "\nClock sources:"
	for (i = 1; i <= nk; i++) printf " %s %s%s", order[i], clk[order[i]], i < nk ? "," : ".\n"
	printf "ns per mmap + munmap of a %s-iteration loop; median of %d rounds per boot, then median of %d boots; in parentheses the range over boots. The added costs are medians of per-round differences (the modes of a round run back to back).\n", iters, rounds, boots
}' "$raw" >"$out"
cat "$out"
