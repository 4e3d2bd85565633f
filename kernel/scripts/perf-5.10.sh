#!/usr/bin/env bash
# perf-5.10.sh [--unpatched | --series-check]: Debian 11's perf (5.10's tools/perf), built the
# way Debian builds linux-perf-5.10 as far as bookworm's toolchain allows.
#
#   (no option)     build 5.10 + the kernel series (kernel/patches/linux-5.10, whose first patch
#                   brings the uapi bit into tools/include) + the tools series
#                   (kernel/patches/linux-5.10-perf) and print the path of the perf binary;
#   --unpatched     the same without the tools series: Debian 11's perf as it ships;
#   --series-check  the maintainer's check of the tools series: git am each patch on top of the
#                   kernel series, checkpatch.pl --strict on it (any error or warning fails),
#                   and build perf after it (the series is bisectable). Passing runs are
#                   remembered by a stamp keyed like the binary.
#
# Progress and logs go to stderr. The binary is cached in $CACHE/perf by a hash of the source
# version, both series, the build switches, this script and the compiler, like the kernel
# images; objects go through ccache. Compiles take the machine-wide build lock: they never run
# beside a kernel build. LAB_PERF_SERIES_DIR replaces the tools series (experiments: a
# deliberately broken series).
set -euo pipefail
. "$(dirname "$0")/common.sh"

mode=build
case ${1:-} in
--unpatched) mode=unpatched ;;
--series-check) mode="series-check" ;;
'') ;;
*) die "usage: perf-5.10.sh [--unpatched | --series-check]" ;;
esac

PERF_SERIES_DIR=${LAB_PERF_SERIES_DIR:-$LAB_ROOT/kernel/patches/linux-5.10-perf}
parse_name 5.10

# PERF_SERIES: the patches of the tools series in order (none with --unpatched). Read here, at
# the top, so that a series naming a missing patch stops the script instead of leaving a gap.
PERF_SERIES=()
if [ "$mode" != unpatched ]; then
	SERIES_DIR=$PERF_SERIES_DIR read_series
	PERF_SERIES=("${SERIES[@]}")
fi

# The build switches; Documentation/perf-5.10.md says why each is there. Debian's rules for
# linux-perf pass WERROR=0 and NO_GTK2=1 and let perf's feature detection enable the libraries
# of the package's build dependencies; scripts/install-deps.sh installs bookworm's versions.
PERF_SWITCHES=(
	WERROR=0
	NO_GTK2=1
	NO_JVMTI=1
	NO_LIBBFD=1
	PYTHON=python3
	prefix=/usr
)

# Debian's compiler and linker flags, without the build path in the debug info.
buildflag() { DEB_BUILD_MAINT_OPTIONS=reproducible=-fixfilepath dpkg-buildflags --get "$1"; }

# Outside the $(...) below, where a missing package would only leave a blank.
ver=$(pkg_version 5.10)
khash=$(series_hash)
key=$({
	echo "perf-5.10 $ver $mode"
	echo "$khash"
	for f in "${PERF_SERIES[@]}"; do sha256sum <"$f"; done
	printf '%s\n' "${PERF_SWITCHES[@]}"
	buildflag CFLAGS
	buildflag CPPFLAGS
	buildflag LDFLAGS
	cat "$0"
	gcc --version | head -1
} | sha256sum | cut -c1-16)

name=perf-5.10
[ "$mode" = unpatched ] && name=perf-5.10-unpatched
# What the tree holds once prepared (the same for the build and the series check).
tree_key=$({
	printf '%s' "$ver"
	echo "$khash"
	for f in "${PERF_SERIES[@]}"; do sha256sum <"$f"; done
} | sha256sum | cut -c1-16)
out=$CACHE/perf/$name-$key
stamp=$CACHE/perf/series-check-$key
if [ "$mode" != series-check ] && [ -f "$out/.done" ]; then
	echo "$out/perf"
	exit 0
fi
if [ "$mode" = series-check ] && [ -f "$stamp" ]; then
	cat "$stamp"
	echo "perf-5.10 series-check: PASS (cached: unchanged since $(date -r "$stamp" '+%F %T'))"
	exit 0
fi

# One git worktree of the pristine 5.10 tree per name (never the shared trees themselves) and
# one O= directory: the series check leaves both as the build of the full series finds them,
# so that build compiles nothing again.
TREE=$CACHE/src/$name
OBJ=$CACHE/build/$name
mkdir -p "$OBJ" "$CACHE/perf"

# reset_tree: the tree at `pristine` plus the kernel series.
reset_tree() {
	local base p
	base=$("$LAB_ROOT/kernel/scripts/source.sh" 5.10)
	if [ ! -e "$TREE/.git" ]; then
		git -C "$base" worktree prune
		rm -rf "$TREE"
		git -C "$base" worktree add -q --detach "$TREE" pristine
	fi
	rm -f "$TREE/.lab-perf"
	git -C "$TREE" am --abort >/dev/null 2>&1 || true
	# reset keeps the mtimes of unchanged files: the O= directory rebuilds incrementally
	git -C "$TREE" checkout -q --detach pristine
	git -C "$TREE" reset -q --hard pristine
	read_series
	for p in "${SERIES[@]}"; do
		git_am "$p" || die "git am failed on the kernel series' $(basename "$p")"
	done
}

git_am() {
	lab_git -C "$TREE" am -q --keep-cr "$1" ||
		{ git -C "$TREE" am --abort >/dev/null 2>&1 || true; return 1; }
}

# perf_make LOG: build the tree into OBJ with the switches above, at -j2.
perf_make() {
	# ccache through its compiler links: CC stays a plain command name for perf's feature
	# checks and for the python extension's setup.py.
	lab_ccache_env
	PATH=/usr/lib/ccache:$PATH make -C "$TREE/tools/perf" O="$OBJ" -j2 "${PERF_SWITCHES[@]}" \
		EXTRA_CFLAGS="$(buildflag CFLAGS) $(buildflag CPPFLAGS)" LDFLAGS="$(buildflag LDFLAGS)" \
		>>"$1" 2>&1
}

build() {
	[ -f "$out/.done" ] && return 0
	local log=$OBJ.log t0 p
	if [ "$(cat "$TREE/.lab-perf" 2>/dev/null)" != "$tree_key" ]; then
		progress "$name" "git am the kernel series and ${#PERF_SERIES[@]} tools patches"
		reset_tree
		for p in "${PERF_SERIES[@]}"; do
			git_am "$p" || die "git am failed on $(basename "$p")"
		done
		echo "$tree_key" >"$TREE/.lab-perf"
	fi
	: >"$log"
	t0=$(date +%s)
	progress "$name" "compile (-j2, log $log)"
	if ! perf_make "$log"; then
		grep -E 'error|Error' "$log" | head -20 >&2
		tail -20 "$log" >&2
		die "build of $name failed (log: $log)"
	fi
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	cp "$OBJ/perf" "$out.tmp/perf"
	"$OBJ/perf" version --build-options >"$out.tmp/build-options.txt"
	git -C "$TREE" log --oneline pristine..HEAD >"$out.tmp/commits.txt"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	touch "$out/.done"
	progress "$name" "done in $(( $(date +%s) - t0 ))s: $out/perf"
}

series_check() {
	local summary=$CACHE/perf/series-check.$$ p pname log cp res i=0 n fail=0 t0
	local pyshim=$CACHE/perf/pybin
	local patches=("${PERF_SERIES[@]}")
	n=${#patches[@]}
	[ "$n" -gt 0 ] || die "no patches listed in $PERF_SERIES_DIR/series"
	# checkpatch runs scripts/spdxcheck.py with `python`: Debian's python3
	mkdir -p "$pyshim"
	ln -sf /usr/bin/python3 "$pyshim/python"
	: >"$summary"
	progress "$name series-check" "kernel series, then $n tools patches"
	reset_tree
	for p in "${patches[@]}"; do
		i=$((i + 1))
		pname=$(basename "$p")
		log=$CACHE/build/$name-series-check-$pname.log
		: >"$log"
		if ! git_am "$p" >>"$log" 2>&1; then
			echo "  $pname: git am FAILED" >>"$summary"
			fail=1
			break
		fi
		cp=$(cd "$TREE" && PATH=$pyshim:$PATH ./scripts/checkpatch.pl --strict "$p" 2>&1) || true
		echo "$cp" >>"$log"
		res=$(echo "$cp" | sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks.*/checkpatch \1 errors \2 warnings \3 checks/p')
		case $res in
		'') res="checkpatch did not run" fail=1 ;;
		'checkpatch 0 errors 0 warnings '*) ;;
		*)
			echo "$cp" | grep -E '^(ERROR|WARNING):' -A3 >&2 || true
			fail=1
			;;
		esac
		progress "$name series-check" "[$i/$n] build after $pname"
		t0=$(date +%s)
		if perf_make "$log"; then
			echo "  $pname: git am ok, $res, perf builds ($(( $(date +%s) - t0 ))s)" >>"$summary"
		else
			grep -E 'error' "$log" | head -10 >&2
			echo "  $pname: git am ok, $res, build FAILED (log: $log)" >>"$summary"
			fail=1
		fi
	done
	cat "$summary" >&2
	if [ "$fail" = 0 ]; then
		# The tree holds the full series: the cached build starts from this tree and OBJ.
		echo "$tree_key" >"$TREE/.lab-perf"
		mv "$summary" "$stamp"
		return 0
	fi
	rm -f "$summary"
	return 1
}

if [ "$mode" = series-check ]; then
	if with_lock "$CACHE/lock.build" series_check; then
		echo "perf-5.10 series-check: PASS (each patch: git am, checkpatch --strict clean, perf builds)"
		exit 0
	fi
	echo "perf-5.10 series-check: FAIL" >&2
	exit 1
fi
with_lock "$CACHE/lock.build" build
echo "$out/perf"
