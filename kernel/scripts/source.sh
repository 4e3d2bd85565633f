#!/usr/bin/env bash
# source.sh NAME: print the path of the kernel source tree for NAME, preparing it if needed.
# Pristine trees are git repositories with one commit ("pristine"), so that the series is
# applied with `git am` exactly as a distro maintainer would apply it.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_name "$1"

pristine_tree() {
	local ver dir
	ver=$(pkg_version "$K_BASE")
	dir=$CACHE/src/linux-$K_BASE-$ver
	if [ ! -f "$dir/.lab-ready" ]; then
		progress "source $K_BASE" "extracting linux-source-$K_BASE $ver"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar xf "/usr/src/linux-source-$K_BASE.tar.xz" -C "$dir.tmp" --strip-components=1
		progress "source $K_BASE" "git init"
		git -C "$dir.tmp" init -q
		git -C "$dir.tmp" -c user.name=lab -c user.email=lab@localhost add -f -A .
		git -C "$dir.tmp" -c user.name=lab -c user.email=lab@localhost \
			commit -q -m "Debian linux-source-$K_BASE $ver (pristine)"
		git -C "$dir.tmp" tag pristine
		mv "$dir.tmp" "$dir"
		touch "$dir/.lab-ready"
	fi
	echo "$dir"
}

# rt_tree: the pristine 5.10 tree plus Debian's PREEMPT_RT patch, as one commit on top of
# `pristine` (applied with patch -p1, as Debian's build applies it).
rt_tree() {
	local base dir want
	base=$(pristine_tree)
	dir=$CACHE/src/linux-$K_BASE-rt
	want=$(pkg_version "$K_BASE")-$(sha256sum <"$RT_PATCH" | cut -c1-16)
	if [ "$(cat "$dir/.lab-rt" 2>/dev/null)" != "$want" ]; then
		progress "source $K_BASE-rt" "applying $(basename "$RT_PATCH")"
		if [ ! -d "$dir" ]; then
			git -C "$base" worktree prune
			git -C "$base" worktree add -q --detach "$dir" pristine
		fi
		git -C "$dir" reset -q --hard pristine
		git -C "$dir" clean -q -fdx
		xz -dc "$RT_PATCH" | patch -d "$dir" -p1 -s -f --no-backup-if-mismatch ||
			die "$(basename "$RT_PATCH") does not apply to linux-source-$K_BASE"
		git -C "$dir" add -f -A .
		git -C "$dir" -c user.name=lab -c user.email=lab@localhost \
			commit -q -m "Debian $(basename "$RT_PATCH") (from linux-source-$K_BASE)"
		echo "$want" >"$dir/.lab-rt"
	fi
	echo "$dir"
}

# patched_tree BASE_DIR NAME: a worktree named NAME at BASE_DIR's commit with the series applied
# by `git am`.
patched_tree() {
	local base=$1 dir=$CACHE/src/$2 want commit
	commit=$(git -C "$base" rev-parse HEAD)
	want=$(pkg_version "$K_BASE")-$(series_hash)-$commit
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
			git -C "$dir" -c user.name=lab -c user.email=lab@localhost am -q --keep-cr "$p" ||
				{ git -C "$dir" am --abort || true; die "git am failed on $(basename "$p")"; }
		done
		echo "$want" >"$dir/.lab-series"
	fi
	echo "$dir"
}

exec 9>"$CACHE/lock.source"
flock 9
if [ "$K_RT" = 1 ]; then base=$(rt_tree) name=linux-$K_BASE-rt-buildid
else base=$(pristine_tree) name=linux-$K_BASE-buildid
fi
if [ "$K_PATCHED" = 1 ]; then patched_tree "$base" "$name"; else echo "$base"; fi
