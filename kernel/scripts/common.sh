# Shared by the lab scripts: kernel names, cache layout, progress output.
# shellcheck shell=bash

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${BUILDID_MMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/buildid-mmap}
CONFIGS=$LAB_ROOT/kernel/configs
# LAB_SERIES_DIR lets experiments (a deliberately broken series, an injected WARN_ON) use
# another series without touching the committed one; the cache key follows its content.
SERIES_DIR=${LAB_SERIES_DIR:-$LAB_ROOT/kernel/patches/linux-5.10}
mkdir -p "$CACHE"
LAB_T0=${LAB_T0:-$(date +%s)}
export LAB_T0

die() { echo "lab: error: $*" >&2; exit 1; }

# progress WHAT STAGE: one line on stderr with the time since this make started.
progress() {
	local s=$(( $(date +%s) - LAB_T0 ))
	printf '[%s] %-22s %s (%d:%02d)\n' "$(date +%H:%M:%S)" "$1" "$2" $((s / 60)) $((s % 60)) >&2
}

# parse_name NAME: sets K_BASE (5.10|6.12), K_PATCHED (0|1), K_RT (0|1: Debian's PREEMPT_RT
# patch under the series), K_VARIANT (""|kasan|abi), K_ARCH (x86_64|arm64) and K_PAGES (4k|64k).
# NAME is BASE[-rt][-buildid][-arm64[-64k]][-kasan|-abi].
parse_name() {
	local n=$1
	K_NAME=$n K_VARIANT="" K_PATCHED=0 K_RT=0 K_ARCH=x86_64 K_PAGES=4k
	case $n in
	*-kasan) K_VARIANT=kasan; n=${n%-kasan} ;;
	*-abi) K_VARIANT=abi; n=${n%-abi} ;;
	esac
	case $n in *-64k) K_PAGES=64k; n=${n%-64k} ;; esac
	case $n in *-arm64) K_ARCH=arm64; n=${n%-arm64} ;; esac
	case $n in *-buildid) K_PATCHED=1; n=${n%-buildid} ;; esac
	case $n in *-rt) K_RT=1; n=${n%-rt} ;; esac
	case $n in
	5.10|6.12) K_BASE=$n ;;
	*) die "unknown kernel '$1' (known: 5.10, 5.10-buildid, 5.10-rt, 5.10-rt-buildid, 6.12, each with an optional -arm64 or -arm64-64k and then an optional -kasan or -abi suffix)" ;;
	esac
	if [ "$K_PAGES" = 64k ] && [ "$K_ARCH" != arm64 ]; then
		die "'$1': -64k is an arm64 page size (use -arm64-64k)"
	fi
	if [ "$K_PATCHED" = 1 ] || [ "$K_RT" = 1 ]; then
		[ "$K_BASE" = 5.10 ] || die "'$1': the series and the RT patch apply to 5.10 only"
	fi
	if [ "$K_VARIANT" = abi ] && [ "$K_ARCH" != x86_64 ]; then
		die "'$1': the ABI variant is x86_64 only"
	fi
}

# The PREEMPT_RT patch that Debian's linux-source-5.10 ships next to the source tarball.
RT_PATCH=/usr/src/linux-patch-5.10-rt.patch.xz

pkg_version() {
	dpkg-query -W -f='${Version}' "linux-source-$1" 2>/dev/null ||
		die "linux-source-$1 is not installed (run scripts/install-deps.sh)"
}

# series_files: the patches listed in the series file, in order (absolute paths).
series_files() {
	[ -f "$SERIES_DIR/series" ] || return 0
	local p
	while read -r p; do
		case $p in ''|'#'*) continue ;; esac
		[ -f "$SERIES_DIR/$p" ] || die "series lists $p, which does not exist"
		echo "$SERIES_DIR/$p"
	done <"$SERIES_DIR/series"
}

# read_series: SERIES, an array of the patches of the series in order. Unlike a loop over
# $(series_files), a series that names a missing patch stops the script here.
read_series() {
	local out
	out=$(series_files) || exit 1
	SERIES=()
	[ -z "$out" ] || mapfile -t SERIES <<<"$out"
}

series_hash() {
	local f
	read_series
	{ for f in "${SERIES[@]}"; do sha256sum <"$f"; done; } | sha256sum | cut -c1-16
}

config_fragments() {
	# The ABI variant is not booted: modules and modversions on tinyconfig, nothing else.
	if [ "$K_VARIANT" = abi ]; then
		echo "$CONFIGS/abi.config"
		return
	fi
	# The same guest everywhere (options of the other architecture are dropped by
	# olddefconfig), plus what the arm64 virt machine needs.
	echo "$CONFIGS/base.config"
	echo "$CONFIGS/block.config"
	if [ "$K_ARCH" = arm64 ]; then
		echo "$CONFIGS/arm64.config"
		[ "$K_PAGES" = 64k ] && echo "$CONFIGS/arm64-64k.config"
	fi
	[ "$K_RT" = 1 ] && echo "$CONFIGS/rt.config"
	# The BPF path of perf-buildid record is for kernels without the series.
	if [ "$K_BASE" = 5.10 ] && [ "$K_PATCHED" = 0 ] && [ "$K_RT" = 0 ] && [ -z "$K_VARIANT" ]; then
		echo "$CONFIGS/bpf.config"
	fi
	[ "$K_VARIANT" = kasan ] && echo "$CONFIGS/kasan.config"
	return 0
}

# Bump when build.sh changes what it produces (not for cosmetic changes: every bump rebuilds
# every kernel).
LAB_BUILD_EPOCH=2

# kernel_key: a hash of everything that determines the built image.
# The version and the fragments are read first: inside the pipe, a failure (no
# linux-source package, say) would only leave a blank in the key.
kernel_key() {
	local version frags f
	version=$(pkg_version "$K_BASE") || exit 1
	frags=$(config_fragments) || exit 1
	{
		echo "$K_NAME $version"
		[ "$K_PATCHED" = 1 ] && series_hash
		[ "$K_RT" = 1 ] && sha256sum <"$RT_PATCH"
		while IFS= read -r f; do cat "$f"; done <<<"$frags"
		echo "build procedure $LAB_BUILD_EPOCH"
		gcc --version | head -1
	} | sha256sum | cut -c1-16
}

image_dir() { echo "$CACHE/images/$K_NAME-$(kernel_key)"; }

# lab_configure SRC OBJ LOG MAKE...: tinyconfig, then the fragments of the parsed name merged
# with the kernel's merge_config.sh, then olddefconfig. MAKE... is the make command line that
# builds SRC into OBJ. Appends to LOG; returns non-zero (after showing LOG's tail) on failure.
lab_configure() {
	local src=$1 obj=$2 log=$3
	shift 3
	mkdir -p "$obj"
	{
		"$@" tinyconfig &&
			# shellcheck disable=SC2046
			(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
				$(config_fragments)) &&
			"$@" olddefconfig
	} >>"$log" 2>&1 || { tail -30 "$log" >&2; return 1; }
}

# with_lock FILE CMD...: one kernel build at a time on this machine (2 cores).
with_lock() {
	local lock=$1; shift
	mkdir -p "$(dirname "$lock")"
	(
		flock -n 9 || { progress lab "waiting for $(basename "$lock")"; flock 9; }
		"$@"
	) 9>"$lock"
}
