#!/usr/bin/env bash
# abi-check.sh [--no-guard] lab|debian [BASE]: the series must not change the module ABI, i.e.
# the genksyms CRC of any exported symbol (what Debian's build compares with debian/abi). BASE
# is a base kernel of LAB_BASES (kernel/scripts/common.sh); without it, every base with a series
# (lab) or with a Debian build to compare with (debian).
#
#   lab     builds BASE and BASE-buildid (the lab's guests, whose base.config has modules and
#           modversions) and compares their Module.symvers: same exports, every CRC identical.
#   debian  configures pristine and patched BASE with Debian's amd64 config (for 5.10 Debian 11's
#           linux-config-5.10, make olddefconfig), runs make prepare, and builds only the objects
#           the series touches and the objects whose exports reach struct perf_event_attr
#           (kernel/events, x86's PMU code, KVM's PMU and x86 code), with W=1 and sparse (C=1)
#           and the genksyms step of the full build. The touched files must have no new warning,
#           and the CRCs of every export of those objects must equal the ones in Module.symvers
#           of Debian's own build (the base's debian field: for 5.10, 5.10.262-1 and
#           linux-headers-5.10.0-46-amd64), pristine and patched.
#
# --no-guard runs the same check on the series plus a patch, generated here, that removes the
# __GENKSYMS__ guard (the series' avoid-ABI-change patch, 0005): the check must then FAIL (CRCs
# change). It proves the check can fail; it exits 0 when the check failed as it must.
#
# Results are cached by a key over their inputs; ABI_CHECK_FORCE=1 recomputes them.
set -euo pipefail
. "$(dirname "$0")/common.sh"
# sort and join must agree on the order of the symbol names.
export LC_ALL=C

noguard=0 opts=()
[ "${1:-}" = --no-guard ] && { noguard=1 opts=(--no-guard); shift; }
mode=${1:-}
case $mode/$# in lab/[12]|debian/[12]) ;; *) die "usage: abi-check.sh [--no-guard] lab|debian [BASE]" ;; esac
if [ $# = 1 ]; then
	field=series
	[ "$mode" = debian ] && field=debian
	rc=0
	mapfile -t bases < <(lab_bases "$field")
	for b in "${bases[@]}"; do
		"$0" "${opts[@]}" "$mode" "$b" || rc=1
	done
	exit "$rc"
fi
# The patched kernel's name: its base's line gives the series.
parse_name "$2-buildid"

# Debian's own build of the base: the version of its packages and the ABI name of its headers.
DEB_VERSION="" DEB_ABINAME=""
if [ "$mode" = debian ]; then
	IFS=/ read -r DEB_VERSION DEB_ABINAME <<<"$(base_field "$K_BASE" debian)"
	[ -n "$DEB_ABINAME" ] || die "no Debian build of $K_BASE to compare with (LAB_BASES)"
fi
AC=$CACHE/abi-check/$K_BASE
mkdir -p "$AC"

# noguard_series: a series directory holding the series and one more patch that takes the
# genksyms guard out of include/uapi/linux/perf_event.h (made from the series itself, so it
# cannot go stale).
noguard_series() {
	local dir tree=$AC/noguard-tree base p
	dir=$AC/noguard-$(series_hash)
	if [ ! -f "$dir/series" ]; then
		base=$("$LAB_ROOT/kernel/scripts/source.sh" "$K_BASE")
		git -C "$base" worktree prune
		rm -rf "$tree" "$dir.tmp"
		git -C "$base" worktree add -q --detach "$tree" pristine
		read_series
		for p in "${SERIES[@]}"; do
			lab_git -C "$tree" am -q --keep-cr "$p"
		done
		grep -q __GENKSYMS__ "$tree/include/uapi/linux/perf_event.h" ||
			die "the series has no __GENKSYMS__ guard in include/uapi/linux/perf_event.h"
		# Keep the branch that the compiler sees, drop the one that genksyms sees (unifdef
		# exits 1 when it removed something).
		gcc -O1 -o "$AC/unifdef" "$tree/scripts/unifdef.c"
		"$AC/unifdef" -U__GENKSYMS__ "$tree/include/uapi/linux/perf_event.h" \
			>"$AC/perf_event.h.noguard" || [ $? = 1 ] || die "unifdef failed"
		cp "$AC/perf_event.h.noguard" "$tree/include/uapi/linux/perf_event.h"
		lab_git -C "$tree" commit -q -a \
			-m "abi-check: drop the __GENKSYMS__ guard (negative test)"
		mkdir -p "$dir.tmp"
		cp "$SERIES_DIR/series" "$dir.tmp/"
		read_series
		for p in "${SERIES[@]}"; do cp "$p" "$dir.tmp/"; done
		git -C "$tree" format-patch -q -1 --stdout >"$dir.tmp/9999-abi-noguard.patch"
		echo 9999-abi-noguard.patch >>"$dir.tmp/series"
		git -C "$base" worktree remove --force "$tree"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

if [ "$noguard" = 1 ]; then
	SERIES_DIR=$(noguard_series)
	export LAB_SERIES_DIR=$SERIES_DIR
fi

# compare_symvers A B: "<symbol> <crc A> <crc B>" for every export of A or B whose CRC differs
# or that only one of them has (crc "-").
compare_symvers() {
	join -a1 -a2 -e - -o 0,1.2,2.2 \
		<(awk '{print $2, $1}' "$1" | sort -k1,1) <(awk '{print $2, $1}' "$2" | sort -k1,1) |
		awk '"" $2 != "" $3'
}

lab() {
	local a b n diff changed only
	a=$(dirname "$("$LAB_ROOT/kernel/scripts/build.sh" "$K_BASE")")/Module.symvers
	b=$(dirname "$("$LAB_ROOT/kernel/scripts/build.sh" "$K_BASE-buildid")")/Module.symvers
	n=$(wc -l <"$a")
	[ "$n" -gt 0 ] || die "$a lists no exports"
	# hw_breakpoint's exports take struct perf_event_attr: they must be there to compare.
	grep -qx CONFIG_HAVE_HW_BREAKPOINT=y "$(dirname "$a")/config" ||
		die "$K_BASE has no CONFIG_HAVE_HW_BREAKPOINT: its hw_breakpoint exports are not compared"
	diff=$(compare_symvers "$a" "$b")
	changed=$(echo "$diff" | awk 'NF == 3 && $2 != "-" && $3 != "-"' | grep -c . || true)
	only=$(echo "$diff" | awk 'NF == 3 && ($2 == "-" || $3 == "-")' | grep -c . || true)
	local perf
	perf=$(grep -cE '	(perf_|register_.*hw_breakpoint|unregister_.*hw_breakpoint|modify_user_hw_breakpoint)' "$a" || true)
	echo "$diff" | sed '/^$/d' | head -20 | sed 's/^/  CRC differs: /' >&2
	echo "abi-check lab $K_BASE${SERIES_TAG:-}: $n exports in Module.symvers ($perf from perf and hw_breakpoint), $changed CRCs changed, $only added or removed"
	[ "$changed" = 0 ] && [ "$only" = 0 ]
}

# --- Debian 11's configuration --------------------------------------------------------------
# Objects whose exports reach struct perf_event_attr (through struct perf_event, struct pmu,
# struct kvm_pmu ...), and the objects of the files the series touches.
DEB_OBJS=(kernel/events/core.o kernel/events/ring_buffer.o kernel/events/hw_breakpoint.o
	kernel/events/uprobes.o arch/x86/events/core.o arch/x86/kvm/pmu.o arch/x86/kvm/x86.o)

# deb_build NAME SRC: configure SRC with Debian's config in $CACHE/build/debian-NAME, make
# prepare, build the objects with W=1 C=1; writes NAME.crcs ("symbol crc") and NAME.warnings.
deb_build() {
	local name=$1 src=$2 obj=$CACHE/build/debian-$K_BASE-$1 log=$AC/debian-$1.log objs=("${DEB_OBJS[@]}")
	[ -f "$src/lib/buildid.c" ] && objs+=(lib/buildid.o)
	local cc=gcc
	command -v ccache >/dev/null && cc="ccache gcc"
	lab_ccache_env
	local mk=(make -C "$src" O="$obj" ARCH=x86_64 CC="$cc" -j"$(nproc)")
	: >"$log"
	rm -rf "$obj"
	mkdir -p "$obj"
	progress "abi-check debian" "$name: olddefconfig on Debian's config.amd64_none_amd64, make prepare"
	xz -dc "$DEB_CONFIG/usr/src/linux-config-$K_BASE/config.amd64_none_amd64.xz" >"$obj/.config"
	# Debian signs modules with a key that is not public; nothing here links a module.
	"$src/scripts/config" --file "$obj/.config" --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str MODULE_SIG_KEY "certs/signing_key.pem"
	"${mk[@]}" olddefconfig >>"$log" 2>&1 || { tail -20 "$log" >&2; die "olddefconfig failed ($log)"; }
	grep -qx CONFIG_MODVERSIONS=y "$obj/.config" || die "Debian's config lost CONFIG_MODVERSIONS"
	"${mk[@]}" prepare >>"$log" 2>&1 || { tail -20 "$log" >&2; die "make prepare failed ($log)"; }
	progress "abi-check debian" "$name: W=1 C=1 ${objs[*]}"
	"${mk[@]}" W=1 C=1 KBUILD_SYMTYPES=1 "${objs[@]}" >>"$log" 2>&1 ||
		{ grep -E 'error' "$log" | head -20 >&2; die "building the objects failed ($log)"; }
	local o
	for o in "${objs[@]}"; do
		[ -f "$obj/$o" ] || die "$o was not built ($log)"
		# 5.10's __crc_ symbols are absolute, their value is the CRC; nm prints 64-bit values
		# and Module.symvers 0x%08x.
		nm "$obj/$o" | awk '$3 ~ /^__crc_/ { sub(/^__crc_/, "", $3); print $3, "0x" tolower(substr($1, length($1) - 7)) }'
	done | sort >"$AC/debian-$name.crcs"
	# Warnings in the files the series touches, with line and column numbers dropped so that
	# moved code compares equal.
	grep -E "(^|/)($TOUCHED_RE):[0-9]+(:[0-9]+)?: (warning|error):" "$log" |
		sed -E "s#^(.*/)?($TOUCHED_RE):[0-9]+(:[0-9]+)?:#\2:#" | sort >"$AC/debian-$name.warnings" || true
	cp -f "$obj/.config" "$AC/debian-$name.config"
}

debian() {
	local key stamp
	DEB_CONFIG=$("$LAB_ROOT/kernel/scripts/debs.sh" "linux-config-$K_BASE=$DEB_VERSION")
	DEB_HEADERS=$("$LAB_ROOT/kernel/scripts/debs.sh" "linux-headers-$DEB_ABINAME-amd64=$DEB_VERSION")
	local symvers=$DEB_HEADERS/usr/src/linux-headers-$DEB_ABINAME-amd64/Module.symvers
	[ -s "$symvers" ] || die "no Module.symvers in linux-headers-$DEB_ABINAME-amd64"
	local ver
	ver=$(pkg_version "$K_BASE")
	[ "$ver" = "$DEB_VERSION" ] ||
		die "$K_PACKAGE is $ver, Debian's Module.symvers is for $DEB_VERSION"
	local patches hash
	read_series
	patches=("${SERIES[@]}")
	hash=$(series_hash)
	TOUCHED_RE=$(sed -n 's|^+++ b/\(.*\)$|\1|p' "${patches[@]}" | sort -u |
		sed 's/[.]/\\./g' | paste -sd'|')

	key=$({
		echo "$hash"
		echo "$DEB_VERSION ${DEB_OBJS[*]}"
		cat "$0"
		gcc --version | head -1
	} | sha256sum | cut -c1-16)
	stamp=$AC/debian-pass-$key
	if [ "${ABI_CHECK_FORCE:-0}" != 1 ] && [ -f "$stamp" ]; then
		cat "$stamp"
		return 0
	fi

	run() {
		deb_build pristine "$("$LAB_ROOT/kernel/scripts/source.sh" "$K_BASE")"
		deb_build patched "$("$LAB_ROOT/kernel/scripts/source.sh" "$K_BASE-buildid")"
	}
	with_lock "$CACHE/lock.build" run

	local out=$AC/debian-result.$$ fail=0 n p_eq b_eq changed newwarn
	: >"$out"
	# Debian's CRCs of the symbols these objects export.
	awk '{print $2, $1}' "$symvers" | sort >"$AC/debian-shipped.crcs"
	n=$(wc -l <"$AC/debian-pristine.crcs")
	[ "$n" -gt 0 ] || die "the objects export nothing: no __crc_ symbols (genksyms did not run?)"
	p_eq=$(join "$AC/debian-pristine.crcs" "$AC/debian-shipped.crcs" | awk '"" $2 == "" $3' | wc -l)
	b_eq=$(join "$AC/debian-patched.crcs" "$AC/debian-shipped.crcs" | awk '"" $2 == "" $3' | wc -l)
	changed=$(join -a1 -e - -o 0,1.2,2.2 "$AC/debian-pristine.crcs" "$AC/debian-patched.crcs" |
		awk '"" $2 != "" $3' | tee "$AC/debian-changed.txt" | wc -l)
	join -a1 -e - -o 0,1.2,2.2 "$AC/debian-patched.crcs" "$AC/debian-shipped.crcs" |
		awk '"" $2 != "" $3' >"$AC/debian-vs-shipped.txt"
	local hit
	for s in perf_event_create_kernel_counter perf_pmu_register; do
		hit=$(grep "^$s " "$AC/debian-patched.crcs" | awk '{print $2}')
		echo "  $s: patched $hit, Debian $(grep "^$s " "$AC/debian-shipped.crcs" | awk '{print $2}')" >>"$out"
	done
	newwarn=$(comm -13 "$AC/debian-pristine.warnings" "$AC/debian-patched.warnings")
	{
		echo "  Debian config (olddefconfig): $(grep -c '=[ym]$' "$AC/debian-patched.config") options set;" \
			"objects: ${DEB_OBJS[*]} lib/buildid.o"
		echo "  W=1 C=1 warnings in the files the series touches: pristine $(wc -l <"$AC/debian-pristine.warnings")," \
			"patched $(wc -l <"$AC/debian-patched.warnings"), new $(echo "$newwarn" | grep -c . || true)"
		echo "$newwarn" | sed '/^$/d; s/^/    new: /'
		sed 's/^/  CRC differs from Debian: /' "$AC/debian-vs-shipped.txt" | head -20
	} >>"$out"
	echo "abi-check debian $K_BASE${SERIES_TAG:-}: $n exports; equal to Debian's Module.symvers: pristine $p_eq, patched $b_eq; changed by the series: $changed" >>"$out"
	[ "$b_eq" = "$n" ] && [ "$changed" = 0 ] && [ -z "$newwarn" ] || fail=1
	cat "$out"
	if [ "$fail" = 0 ] && [ "$noguard" = 0 ]; then
		cp "$out" "$stamp"
	fi
	rm -f "$out"
	return "$fail"
}

[ "$noguard" = 1 ] && SERIES_TAG=" (series without the genksyms guard)"
set +e
"$mode"
rc=$?
set -e
if [ "$noguard" = 1 ]; then
	if [ "$rc" = 0 ]; then
		echo "abi-check $mode $K_BASE: FAIL: without the __GENKSYMS__ guard no CRC changed: the check cannot fail" >&2
		exit 1
	fi
	echo "abi-check $mode $K_BASE: the check fails without the __GENKSYMS__ guard, as it must"
	exit 0
fi
exit "$rc"
