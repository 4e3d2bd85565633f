#!/usr/bin/env bash
# series-check.sh [--force] [--fixes] [BASE]: check the kernel series of BASE (every base
# kernel with a series in LAB_BASES, kernel/scripts/common.sh, when none is given, and then
# every base's fixes) the way a maintainer would take it. --fixes checks BASE's fixes (the
# fixes column: kernel/patches/linux-5.10-fixes for 5.10) instead of its series, the same way
# on the same tree, but for the cover letter and the uapi copy, which they do not touch.
#
# On a worktree of BASE's pristine tree, reset to the `pristine` tag, apply every patch listed
# in its series (kernel/patches/linux-5.10/series for 5.10) with `git am`, and after each one:
#   - scripts/checkpatch.pl --strict on the patch: any error or warning fails;
#   - the tools/ copy of the uapi header must be what headers_install exports from the kernel
#     copy (unifdef -U__KERNEL__): upstream's text, without the genksyms guard;
#   - build bzImage (lab x86_64 config, incremental O= dir, ccache): the series is bisectable.
# At the end, the C files the series touches are rebuilt with W=1 and their warnings are compared
# with the pristine tree's: any new warning fails.
# A stamp keyed by the series, the configs, this script and the compiler skips all of this when
# nothing changed since a passing run (--force or SERIES_CHECK_FORCE=1 runs anyway).
# Builds take the machine-wide build lock (never two kernel builds at once on 2 cores).
set -euo pipefail
. "$(dirname "$0")/common.sh"

force=${SERIES_CHECK_FORCE:-0}
[ "${1:-}" = --force ] && { force=1; shift; }
fixes=0
[ "${1:-}" = --fixes ] && { fixes=1; shift; }
case $# in
0)
	rc=0
	mapfile -t bases < <(lab_bases series)
	for b in "${bases[@]}"; do
		SERIES_CHECK_FORCE=$force "$0" "$b" || rc=1
	done
	mapfile -t bases < <(lab_bases fixes)
	for b in "${bases[@]}"; do
		SERIES_CHECK_FORCE=$force "$0" --fixes "$b" || rc=1
	done
	exit "$rc"
	;;
1) ;;
*) die "usage: series-check.sh [--force] [--fixes] [BASE]" ;;
esac
# The plain kernel's configuration; its series comes from the base's line.
parse_name "$1"
what=series
if [ "$fixes" = 1 ]; then
	[ -n "$FIXES_DIR" ] || die "no fixes apply to $K_BASE"
	SERIES_DIR=$FIXES_DIR what=fixes
fi
[ -n "$SERIES_DIR" ] || die "no series applies to $K_BASE"

SC=$CACHE/series-check/$K_BASE
TREE=$SC/src
OBJ=$SC/obj
LOGS=$SC/logs
mkdir -p "$SC" "$LOGS"

mapfile -t patches < <(series_files)
[ "${#patches[@]}" -gt 0 ] || die "no patches listed in $SERIES_DIR/series"

# Outside the $(...) below, where a failure would only leave a blank in the key.
ver=$(pkg_version "$K_BASE")
hash=$(series_hash)
key=$({
	echo "$hash"
	printf '%s' "$ver"
	config_fragments | while IFS= read -r f; do cat "$f"; done
	cat "$0"
	gcc --version | head -1
} | sha256sum | cut -c1-16)
# The fixes share the series' tree and objects: after the series, they rebuild little.
stamp=$SC/pass-$key
[ "$fixes" = 0 ] || stamp=$SC/pass-fixes-$key

if [ "$force" != 1 ] && [ -f "$stamp" ]; then
	cat "$stamp"
	echo "series-check $K_BASE $what: PASS (cached: $what $hash unchanged since $(date -r "$stamp" '+%F %T'))"
	exit 0
fi

# checkpatch runs scripts/spdxcheck.py with `python`, which needs python3-ply and python3-git:
# make sure that is Debian's python3, not whatever python is first in PATH.
PYSHIM=$SC/pybin
mkdir -p "$PYSHIM"
ln -sf /usr/bin/python3 "$PYSHIM/python"
/usr/bin/python3 -c 'import ply, git' 2>/dev/null ||
	die "checkpatch needs python3-ply and python3-git (scripts/install-deps.sh)"

cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
lab_ccache_env

summary=$SC/summary.$$
failed=$SC/failed.$$
rm -f "$failed"
trap 'rm -f "$summary" "$failed"' EXIT
note() { echo "$*" | tee -a "$summary" >&2; }
# check() runs in a subshell (under the lock): failures are recorded in a file.
bad() { note "$*"; touch "$failed"; }

prepare_tree() {
	local base
	base=$("$LAB_ROOT/kernel/scripts/source.sh" "$K_BASE")
	if [ ! -e "$TREE/.git" ]; then
		git -C "$base" worktree prune
		rm -rf "$TREE"
		git -C "$base" worktree add -q --detach "$TREE" pristine
	fi
	git -C "$TREE" am --abort >/dev/null 2>&1 || true
	# reset + clean keeps the mtimes of files the series did not touch: incremental builds.
	git -C "$TREE" checkout -q --detach pristine
	git -C "$TREE" reset -q --hard pristine
	git -C "$TREE" clean -q -fdx
}

mk() { make -C "$TREE" O="$OBJ" ARCH=x86_64 CC="$cc" -j"$(nproc)" "$@"; }

configure() {
	local log=$LOGS/config.log
	: >"$log"
	lab_configure "$TREE" "$OBJ" "$log" mk || die "configuring $OBJ failed (log: $log)"
}

# w1_warnings FILE.c: the W=1 warnings that compiling FILE.c reports in files the series
# touches (line numbers dropped, so that moved code compares equal).
w1_warnings() {
	mk W=1 "${1%.c}.o" 2>&1 | grep -E "(^|/)($touched_re):[0-9]+(:[0-9]+)?: warning:" |
		sed -E "s#^(.*/)?($touched_re):[0-9]+(:[0-9]+)?:#\2:#" | sort || true
}

# tools_copy_ok: the tools/ copy of perf_event.h equals the kernel copy as headers_install
# exports it (unifdef exits 0 when it changed nothing, 1 when it removed something).
tools_copy_ok() {
	local rc=0
	mk scripts_unifdef >/dev/null 2>&1 || return 1
	"$OBJ/scripts/unifdef" -U__KERNEL__ -D__EXPORTED_HEADERS__ \
		"$TREE/include/uapi/linux/perf_event.h" >"$SC/perf_event.exported.h" || rc=$?
	[ "$rc" -le 1 ] && cmp -s "$SC/perf_event.exported.h" "$TREE/tools/include/uapi/linux/perf_event.h"
}

check() {
	local p name t0 log cp errs warns checks touched_c=() f
	progress series-check "worktree $TREE reset to pristine"
	prepare_tree
	configure

	# Files the series touches; C files get a W=1 baseline on the pristine tree.
	local touched
	mapfile -t touched < <(cat "${patches[@]}" | sed -n 's|^+++ b/\(.*\)$|\1|p' | sort -u)
	touched_re=$(printf '%s\n' "${touched[@]}" | sed 's/[.]/\\./g' | paste -sd'|')
	for f in "${touched[@]}"; do
		case $f in *.c) touched_c+=("$f") ;; esac
	done
	local base_w="" new_w=""
	for f in "${touched_c[@]}"; do
		[ -f "$TREE/$f" ] && base_w+=$(w1_warnings "$f")$'\n'
	done

	local i=0
	for p in "${patches[@]}"; do
		i=$((i + 1))
		name=$(basename "$p")
		log=$LOGS/$name.log
		: >"$log"
		if ! lab_git -C "$TREE" am -q --keep-cr "$p" \
			>>"$log" 2>&1; then
			bad "  $name: git am FAILED (log: $log)"
			git -C "$TREE" am --abort >/dev/null 2>&1 || true
			return
		fi

		# The tree is Debian's source tarball in a one-commit repository, so the upstream
		# commits that the messages cite cannot be looked up; their format is still checked.
		cp=$(cd "$TREE" || exit 0; PATH=$PYSHIM:$PATH ./scripts/checkpatch.pl --strict \
			--ignore UNKNOWN_COMMIT_ID "$p" 2>&1) || true
		echo "$cp" >>"$log"
		errs="" warns="" checks=""
		read -r errs warns checks < <(echo "$cp" |
			sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks.*/\1 \2 \3/p') || true
		if [ -z "${errs:-}" ]; then
			bad "  $name: checkpatch did not run (log: $log)"
			return
		fi
		local cpres="checkpatch ${errs} errors ${warns} warnings ${checks} checks"
		if [ "$errs" != 0 ] || [ "$warns" != 0 ]; then touch "$failed"; fi

		local uapi="tools/ uapi copy = exported header"
		if [ "$fixes" = 1 ]; then
			uapi="uapi not touched"
		elif ! tools_copy_ok; then
			uapi="tools/ uapi copy DIFFERS from the exported header"
			touch "$failed"
		fi

		progress series-check "[$i/${#patches[@]}] build bzImage after $name"
		t0=$(date +%s)
		if mk bzImage >>"$log" 2>&1; then
			note "  $name: git am ok, $cpres, $uapi, build ok ($(($(date +%s) - t0))s)"
		else
			grep -E 'error' "$log" | head -10 >&2
			bad "  $name: git am ok, $cpres, $uapi, build FAILED (log: $log)"
		fi
		if [ "$errs" != 0 ] || [ "$warns" != 0 ]; then
			echo "$cp" | grep -E '^(ERROR|WARNING):' -A3 >&2 || true
		fi
	done

	for f in "${touched_c[@]}"; do
		new_w+=$(w1_warnings "$f")$'\n'
	done
	local added
	added=$(comm -13 <(printf '%s' "$base_w" | sed '/^$/d' | sort) \
		<(printf '%s' "$new_w" | sed '/^$/d' | sort))
	if [ -n "$added" ]; then
		bad "  W=1: new warnings in ${touched_c[*]}:"
		echo "$added" | sed 's/^/    /' | tee -a "$summary" >&2
	else
		note "  W=1: no new warnings in ${touched_c[*]}"
	fi
	# Leave the objects as a plain build expects them (W=1 changed their command lines).
	mk bzImage >>"$LOGS/w1-rebuild.log" 2>&1 || true
}

: >"$summary"
note "series-check $K_BASE $what: ${#patches[@]} patches from $SERIES_DIR ($what $hash)"
cover=$SERIES_DIR/0000-cover-letter.patch
if [ "$fixes" = 1 ]; then
	: # each fix stands alone: no cover letter
elif [ ! -f "$cover" ]; then
	bad "  0000-cover-letter.patch is missing"
elif grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$cover"; then
	bad "  0000-cover-letter.patch still has the format-patch placeholders"
fi

fail=0
with_lock "$CACHE/lock.build" check || fail=1
[ -e "$failed" ] && fail=1
n_ok=$(grep -c ', build ok (' "$summary" || true)
[ "$n_ok" = "${#patches[@]}" ] || fail=1
rm -f "$failed"

if [ "$fail" = 0 ]; then
	cp "$summary" "$stamp"
	rm -f "$summary"
	echo "series-check $K_BASE $what: PASS (${#patches[@]} patches: checkpatch clean, each builds, no new W=1 warnings)"
	exit 0
fi
rm -f "$summary"
echo "series-check $K_BASE $what: FAIL" >&2
exit 1
