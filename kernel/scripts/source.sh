#!/usr/bin/env bash
# source.sh NAME: print the path of the kernel source tree for NAME, preparing it if needed.
# Pristine trees are git repositories with one commit ("pristine"), so that the series is
# applied with `git am` exactly as a distro maintainer would apply it.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_name "$1"
# Here, outside any $(...): a missing package stops the script (a die inside a command
# substitution would only leave an empty version behind).
ver=$(pkg_version "$K_BASE")

# The functions below set TREE to the tree they prepared. They run in this shell, not in
# $(...), so that set -e stops at the first failing step.

# pristine_tree: Debian's source tarball as a one-commit git repository tagged `pristine`.
pristine_tree() {
	local dir
	dir=$CACHE/src/linux-$K_BASE-$ver
	if [ ! -f "$dir/.lab-ready" ]; then
		progress "source $K_BASE" "extracting $K_PACKAGE $ver"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar xf "/usr/src/$K_PACKAGE.tar.xz" -C "$dir.tmp" --strip-components=1
		progress "source $K_BASE" "git init"
		git -C "$dir.tmp" init -q
		lab_git -C "$dir.tmp" add -f -A .
		lab_git -C "$dir.tmp" commit -q -m "Debian $K_PACKAGE $ver (pristine)"
		git -C "$dir.tmp" tag pristine
		mv "$dir.tmp" "$dir"
		touch "$dir/.lab-ready"
	fi
	TREE=$dir
}

# rt_tree BASE_DIR NAME: a worktree named NAME at BASE_DIR's commit plus Debian's PREEMPT_RT
# patch, as one commit (applied with patch -p1, as Debian's build applies it). It comes last,
# on top of the fixes and the series: Debian applies its featuresets' patches (debian/patches-rt)
# after debian/patches, where the series and the fixes go.
rt_tree() {
	local base=$1 dir=$CACHE/src/$2 want rt commit
	commit=$(git -C "$base" rev-parse HEAD)
	rt=$(sha256sum <"$RT_PATCH" | cut -c1-16)
	want=$ver-$rt-$commit
	if [ "$(cat "$dir/.lab-rt" 2>/dev/null)" != "$want" ]; then
		progress "source $K_NAME" "applying $(basename "$RT_PATCH")"
		if [ ! -d "$dir" ]; then
			git -C "$base" worktree prune
			git -C "$base" worktree add -q --detach "$dir" "$commit"
		fi
		rm -f "$dir/.lab-rt"
		git -C "$dir" reset -q --hard "$commit"
		git -C "$dir" clean -q -fdx
		xz -dc "$RT_PATCH" | patch -d "$dir" -p1 -s -f --no-backup-if-mismatch ||
			die "$(basename "$RT_PATCH") does not apply to $K_PACKAGE$( [ "$K_PATCHED" = 0 ] || echo ' with the series')"
		git -C "$dir" add -f -A .
		lab_git -C "$dir" commit -q -m "Debian $(basename "$RT_PATCH") (from $K_PACKAGE)"
		echo "$want" >"$dir/.lab-rt"
	fi
	TREE=$dir
}

# patched_tree BASE_DIR NAME DIR: a worktree named NAME at BASE_DIR's commit with the series in DIR applied
# by `git am`.
patched_tree() {
	local base=$1 dir=$CACHE/src/$2 SERIES_DIR=$3 want commit hash
	commit=$(git -C "$base" rev-parse HEAD)
	hash=$(series_hash)
	want=$ver-$hash-$commit
	if [ ! -d "$dir" ]; then
		git -C "$base" worktree prune
		git -C "$base" worktree add -q --detach "$dir" "$commit"
	fi
	if [ "$(cat "$dir/.lab-series" 2>/dev/null)" != "$want" ]; then
		progress "source $K_NAME" "git am $(series_files | wc -l) patches"
		git -C "$dir" am --abort >/dev/null 2>&1 || true
		git -C "$dir" reset -q --hard "$commit"
		rm -f "$dir/.lab-series"
		local p
		read_series
		for p in "${SERIES[@]}"; do
			lab_git -C "$dir" am -q --keep-cr "$p" ||
				{ git -C "$dir" am --abort || true; die "git am failed on $(basename "$p")"; }
		done
		echo "$want" >"$dir/.lab-series"
	fi
	TREE=$dir
}

exec 9>"$CACHE/lock.source"
flock 9
# Debian's order: its own patches (the base's fixes, then the series), then the RT featureset.
pristine_tree
name=linux-$K_BASE
if [ "$K_FIXES" = 1 ]; then
	name=$name-fixes
	patched_tree "$TREE" "$name" "$FIXES_DIR"
fi
if [ "$K_PATCHED" = 1 ]; then
	name=$name-buildid
	patched_tree "$TREE" "$name" "$SERIES_DIR"
fi
[ "$K_RT" = 1 ] && rt_tree "$TREE" "$name-rt"
echo "$TREE"
