#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# symbolize.sh PERF_BUILDID FIXTURES OUTDIR
#
# perf-buildid symbolize against binutils, on the fixture workload built as a PIE
# (FIXTURES/workload.full) and at a fixed address (FIXTURES/workload_nopie.full). Every file
# offset is computed here, from nm's addresses and readelf's program headers, and every answer
# is compared with addr2line -f -i on the virtual address:
#   - each function of the workload, named with its file and line, in both input forms;
#   - the inline chain inside spin_outer (inlined_gamma, always_inline), innermost first;
#   - a stripped binary whose debug file is only in a --debug-dir, found by build ID;
#   - a bad line among good ones: an error naming the line, the others printed, status 3;
#   - an unknown build ID and an offset outside every PT_LOAD: "??" and the reason, status 0.
set -euo pipefail

PB=$1
FIX=$2
OUT=$3

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
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

build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }'; }

# The file offset of virtual address $2 in ELF $1: from the PT_LOAD that holds it.
file_offset() {
	local type off vaddr paddr filesz rest
	while read -r type off vaddr paddr filesz rest; do
		[ "$type" = LOAD ] || continue
		if (($2 >= vaddr && $2 < vaddr + filesz)); then
			printf '%x\n' $(($2 - vaddr + off))
			return
		fi
	done < <(readelf -lW "$1")
}

# addr2line's answer for ELF $1 at address $2 as "FUNCTION<tab>BASENAME:LINE" lines,
# innermost first.
expected() {
	addr2line -e "$1" -f -i "$2" | sed 's/ (discriminator [0-9]*)//' |
		paste - - | awk -F'\t' '{ n = split($2, p, "/"); print $1 "\t" p[n] }'
}

# Our answer for one input line as the same lines (function, basename:line), with the key.
ours() {
	awk -F'\t' '{ n = split($3, p, "/"); print $1 "\t" $2 "\t" p[n] (NF > 3 ? "\t" $4 : "") }'
}

# debug dir layout: .build-id/xx/yyyy (and .debug)
install_by_id() {
	local root=$1 file=$2 suffix=$3 id
	id=$(build_id "$file")
	mkdir -p "$root/.build-id/${id:0:2}"
	cp "$file" "$root/.build-id/${id:0:2}/${id:2}$suffix"
}

SYM=("$PB" symbolize --no-debuginfod --debug-root '')

for variant in workload workload_nopie; do
	full=$FIX/$variant.full
	id=$(build_id "$full")
	install_by_id "full-$variant" "$full" ""
	: >"$variant.in"
	: >"$variant.expected"
	while read -r addr _ name; do
		case $name in spin_alpha | spin_beta | spin_outer) ;; *) continue ;; esac
		va=$(printf '0x%x' $((0x$addr + 4)))
		off=$(file_offset "$full" "$va")
		# Both input forms: BUILDID+0xOFFSET, and BUILDID OFFSET without 0x.
		if [ "$name" = spin_beta ]; then
			echo "$id $off" >>"$variant.in"
		else
			echo "$id+0x$off" >>"$variant.in"
		fi
		expected "$full" "$va" | sed "s/^/$id+0x$off\t/" >>"$variant.expected"
	done < <(nm "$full")
	check "$variant: three functions found by nm" [ "$(wc -l <"$variant.in")" = 3 ]

	# An address inside the inlined loop: the first of spin_outer's for which addr2line
	# names two functions.
	read -r start size < <(nm -S "$full" | awk '$4 == "spin_outer" { print $1, $2 }')
	inl=""
	for ((a = 0x$start; a < 0x$start + 0x$size; a++)); do
		if [ "$(addr2line -e "$full" -f -i "$(printf '0x%x' "$a")" | wc -l)" = 4 ]; then
			inl=$(printf '0x%x' "$a")
			break
		fi
	done
	check "$variant: addr2line sees inlined code in spin_outer" [ -n "$inl" ]
	off=$(file_offset "$full" "$inl")
	echo "$id+0x$off" >>"$variant.in"
	expected "$full" "$inl" | sed "s/^/$id+0x$off\t/" >>"$variant.expected"

	"${SYM[@]}" --debug-dir "full-$variant" <"$variant.in" >"$variant.out"
	ours <"$variant.out" | cut -f1-3 >"$variant.got"
	check "$variant: functions and lines as addr2line's" diff -u "$variant.expected" "$variant.got"
	check "$variant: inlined_gamma, inlined into spin_outer, then spin_outer" \
		grep -qxF "$id+0x$off	inlined_gamma	$(expected "$full" "$inl" | head -1 | cut -f2)	inlined into spin_outer" <(ours <"$variant.out")
	check "$variant: the input order is kept" \
		diff <(cut -f1 "$variant.out" | uniq) <(sed 's/ /+0x/' "$variant.in")
done

# The stripped binary has no symbols: only its debug file, found by build ID, names it.
id=$(build_id "$FIX/workload.full")
install_by_id split "$FIX/workload.stripped" ""
install_by_id split "$FIX/workload.debug" ".debug"
"${SYM[@]}" --debug-dir split workload.in >split.out
ours <split.out | cut -f1-3 >split.got
check "stripped binary with its debug file in a --debug-dir" diff -u workload.expected split.got
install_by_id stripped-only "$FIX/workload.stripped" ""
"${SYM[@]}" --debug-dir stripped-only workload.in >stripped.out
check "stripped binary without its debug file: ?? (no symbol)" \
	grep -q "	??	??:0	(no symbol at address)" stripped.out

# A bad line among good ones.
{
	head -1 workload.in
	echo "$id+0xnothex"
	echo "not a line"
	sed -n 2p workload.in
} >mixed.in
status=0
"${SYM[@]}" --debug-dir full-workload mixed.in >mixed.out 2>mixed.err || status=$?
check "bad lines: status 3" [ "$status" = 3 ]
check "bad lines: line 2 named, with what is wrong" \
	grep -q "mixed.in:2: offset '0xnothex' is not a hexadecimal number" mixed.err
check "bad lines: line 3 named" grep -q "mixed.in:3: build ID 'not' is not" mixed.err
check "bad lines: the good lines still print" \
	diff <(cut -f1 mixed.out | uniq) <(sed -n '1p;2p' workload.in | sed 's/ /+0x/')

# Nothing found is not an error of the input.
status=0
printf '%s\n%s\n' "0123456789abcdef0123456789abcdef01234567+0x1000" "$id+0x7fffffff" |
	"${SYM[@]}" --debug-dir full-workload >notfound.out || status=$?
check "not found: status 0" [ "$status" = 0 ]
check "unknown build ID: ?? and why" grep -qxF \
	"0123456789abcdef0123456789abcdef01234567+0x1000	??	??:0	(no file with this build id)" \
	notfound.out
check "offset outside the PT_LOADs: ?? and why" grep -qxF \
	"$id+0x7fffffff	??	??:0	(offset outside every PT_LOAD)" notfound.out

exit "$fail"
