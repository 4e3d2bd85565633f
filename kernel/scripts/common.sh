# Shared by the lab scripts: kernel names, cache layout, progress output.
# shellcheck shell=bash

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${BUILDID_MMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/buildid-mmap}
CONFIGS=$LAB_ROOT/kernel/configs
mkdir -p "$CACHE"
LAB_T0=${LAB_T0:-$(date +%s)}
export LAB_T0

die() { echo "lab: error: $*" >&2; exit 1; }

# lab_ccache_vars [BASEDIR]: the ccache settings of every compile the lab and the Makefile run,
# one NAME=VALUE a line. One cache for every clone and tree; BASEDIR (default: the cache, where
# the lab's trees live) makes the paths under it relative, so that another clone or another
# tree of the same source hits. The size covers kernels, perf 5.10 and perf-buildid's C++.
lab_ccache_vars() {
	printf '%s\n' "CCACHE_DIR=$CACHE/ccache" "CCACHE_BASEDIR=${1:-$CACHE}" CCACHE_NOHASHDIR=true \
		CCACHE_MAXSIZE=10G
}

# lab_ccache_env [BASEDIR]: exports lab_ccache_vars.
lab_ccache_env() {
	local v
	while IFS= read -r v; do export "${v?}"; done < <(lab_ccache_vars "$@")
}

# lab_git ARGS...: git with the identity of the lab's own commits (pristine trees, git am).
lab_git() { git -c user.name=lab -c user.email=lab@localhost "$@"; }

# progress WHAT STAGE: one line on stderr with the time since this make started.
progress() {
	local s=$(( $(date +%s) - LAB_T0 ))
	printf '[%s] %-22s %s (%d:%02d)\n' "$(date +%H:%M:%S)" "$1" "$2" $((s / 60)) $((s % 60)) >&2
}

# The base kernels, one line each: what the scripts know about a base. Adding a base kernel
# (another LTS) is a line here and its package in scripts/install-deps.sh; Documentation/lab.md
# lists what else a new base may want. Fields, "-" for none:
#   base      the first part of the kernel names (5.10 in 5.10-rt-buildid-arm64)
#   package   the Debian package whose /usr/src/PACKAGE.tar.xz is the source; its installed
#             version goes into the cache keys
#   series    the directory under kernel/patches that -buildid applies on top (git am)
#   rt        the PREEMPT_RT patch that -rt applies (patch -p1), as Debian ships it
#   upstream  "yes" when the base itself puts build IDs in PERF_RECORD_MMAP2. The plain kernel
#             of a base without them (no -buildid, -rt or variant) gets bpf.config: it is where
#             perf-buildid record's BPF path is tested.
#   debian    Debian's own build of the base that abi-check compares CRCs with: the version of
#             its linux-config and linux-headers packages, and its ABI name
# shellcheck disable=SC2034 # read through lab_field
LAB_BASES_FIELDS=(base package series rt upstream debian)
# shellcheck disable=SC2034
LAB_BASES=(
	"5.10 linux-source-5.10 linux-5.10 /usr/src/linux-patch-5.10-rt.patch.xz - 5.10.262-1/5.10.0-46"
	"6.12 linux-source-6.12 - - yes -"
)

# The kernels the project tests, one line each (any other name builds and boots as well):
#   name    a kernel name (parse_name)
#   check   the steps of make check (scripts/check.sh) that run on it, comma-separated:
#           vm-test (make vm-test KERNEL=NAME), vm-perf (kernel/scripts/vm-perf.sh NAME),
#           vm-test-arm64 (make vm-test-arm64 with ARM64_KERNELS=NAME); "-": none. The other
#           steps name their kernels themselves: vm-test-rt (5.10-rt-buildid), abi-check
#           (BASE-abi, BASE-buildid-abi), lab-selftest, vm-bpf, vm-coverage and vm-perf-5.10.
# shellcheck disable=SC2034 # read through lab_field
LAB_KERNELS_FIELDS=(name check)
# shellcheck disable=SC2034 # read through lab_field
LAB_KERNELS=(
	"5.10-buildid vm-test,vm-perf"
	"5.10 vm-test,vm-perf"
	"6.12 vm-test"
	"5.10-buildid-kasan vm-test"
	"5.10-rt-buildid -"
	"5.10-buildid-arm64 vm-test-arm64"
	# the 64 KiB-page kernel stays out of check: one more kernel build, about 6 min cold
	"5.10-buildid-arm64-64k -"
	"5.10-abi -"
	"5.10-buildid-abi -"
)

# lab_rows TABLE: the rows of TABLE (LAB_BASES, LAB_KERNELS), one a line: a row
# may be written over several lines and hold comments between rows.
lab_rows() {
	local -n rows_=$1
	local row f
	for row in "${rows_[@]}"; do
		read -rd '' -a f <<<"$row" || true
		echo "${f[*]}"
	done
}

# lab_field TABLE KEY FIELD: prints FIELD of the row of TABLE whose first field is KEY (the
# field names are in TABLE_FIELDS: LAB_BASES_FIELDS for LAB_BASES); fails for an
# unknown KEY.
lab_field() {
	local -n names_=${1}_FIELDS
	local f i
	while read -ra f; do
		[ "${f[0]}" = "$2" ] || continue
		for i in "${!names_[@]}"; do
			[ "${names_[i]}" = "$3" ] && { echo "${f[i]}"; return 0; }
		done
		die "$1: no field '$3'"
	done < <(lab_rows "$1")
	return 1
}

# lab_keys TABLE [FIELD]: the first field of TABLE's rows, one a line; with FIELD, of those
# whose FIELD is not "-".
lab_keys() {
	local f
	while read -ra f; do
		if [ $# -eq 1 ] || [ "$(lab_field "$1" "${f[0]}" "$2")" != - ]; then echo "${f[0]}"; fi
	done < <(lab_rows "$1")
}

base_field() { lab_field LAB_BASES "$@"; }
lab_bases() { lab_keys LAB_BASES "$@"; }
# lab_kernels [STEP]: the kernels of LAB_KERNELS, one a line; with STEP (not empty), those make
# check runs STEP on.
lab_kernels() {
	local k
	while read -r k; do
		if [ -z "${1:-}" ] || [[ ,$(lab_field LAB_KERNELS "$k" check), = *,"$1",* ]]; then
			echo "$k"
		fi
	done < <(lab_keys LAB_KERNELS)
}

# lab_kernels_of ARCH: the kernels of LAB_KERNELS built for ARCH.
lab_kernels_of() {
	local k
	while read -r k; do
		if (parse_name "$k" && [ "$K_ARCH" = "$1" ]); then echo "$k"; fi
	done < <(lab_kernels "")
}

# parse_name NAME: sets K_BASE (a base of LAB_BASES), K_PATCHED (0|1), K_RT (0|1: Debian's
# PREEMPT_RT patch under the series), K_VARIANT (""|kasan|abi), K_ARCH (x86_64|arm64), K_PAGES
# (4k|64k), K_FEATURE (1 when the kernel puts build IDs in MMAP2, from the series or upstream),
# K_UPSTREAM (its base has them upstream: yes|-), and from the base's line the source package
# (K_PACKAGE), SERIES_DIR and RT_PATCH. NAME is BASE[-rt][-buildid][-arm64[-64k]][-kasan|-abi].
# LAB_SERIES_DIR lets experiments (a deliberately broken series, an injected WARN_ON) use
# another series without touching the committed one; the cache key follows its content.
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
	K_BASE=$n
	local series rt
	# shellcheck disable=SC2034 # K_PACKAGE and K_FEATURE are for the scripts
	K_PACKAGE=$(base_field "$K_BASE" package) ||
		die "unknown kernel '$1': NAME is BASE[-rt][-buildid][-arm64[-64k]][-kasan|-abi], BASE one of: $(lab_bases | paste -sd' ') (LAB_BASES in kernel/scripts/common.sh)"
	series=$(base_field "$K_BASE" series)
	rt=$(base_field "$K_BASE" rt)
	K_UPSTREAM=$(base_field "$K_BASE" upstream)
	SERIES_DIR="" RT_PATCH=$rt
	[ "$series" = - ] || SERIES_DIR=${LAB_SERIES_DIR:-$LAB_ROOT/kernel/patches/$series}
	if [ "$K_PAGES" = 64k ] && [ "$K_ARCH" != arm64 ]; then
		die "'$1': -64k is an arm64 page size (use -arm64-64k)"
	fi
	if [ "$K_PATCHED" = 1 ] && [ "$series" = - ]; then
		die "'$1': no series applies to $K_BASE (bases with one: $(lab_bases series | paste -sd' '))"
	fi
	if [ "$K_RT" = 1 ] && [ "$rt" = - ]; then
		die "'$1': no RT patch for $K_BASE (bases with one: $(lab_bases rt | paste -sd' '))"
	fi
	K_FEATURE=$K_PATCHED
	# shellcheck disable=SC2034
	[ "$K_UPSTREAM" = - ] || K_FEATURE=1
	if [ "$K_VARIANT" = abi ] && [ "$K_ARCH" != x86_64 ]; then
		die "'$1': the ABI variant is x86_64 only"
	fi
}

# pkg_version BASE: the installed version of BASE's source package.
pkg_version() {
	local pkg
	pkg=$(base_field "$1" package) || die "unknown base kernel '$1'"
	dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null ||
		die "$pkg is not installed (run scripts/install-deps.sh)"
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
	# The BPF path of perf-buildid record is for kernels without the feature.
	if [ "$K_UPSTREAM" = - ] && [ "$K_PATCHED" = 0 ] && [ "$K_RT" = 0 ] && [ -z "$K_VARIANT" ]; then
		echo "$CONFIGS/bpf.config"
	fi
	[ "$K_VARIANT" = kasan ] && echo "$CONFIGS/kasan.config"
	return 0
}


# Bump when build.sh changes what it produces (not for cosmetic changes: every bump rebuilds
# every kernel).
LAB_BUILD_EPOCH=2

# kernel_key: a hash of everything that determines the built image.
# Every input is read first: inside the pipe, a failure (no linux-source package, a series
# naming a missing patch, say) would only leave a blank in the key.
kernel_key() {
	local version frags f series="" rt=""
	version=$(pkg_version "$K_BASE") || exit 1
	frags=$(config_fragments) || exit 1
	if [ "$K_PATCHED" = 1 ]; then series=$(series_hash) || exit 1; fi
	if [ "$K_RT" = 1 ]; then rt=$(sha256sum <"$RT_PATCH") || exit 1; fi
	{
		echo "$K_NAME $version"
		[ -z "$series" ] || echo "$series"
		[ -z "$rt" ] || echo "$rt"
		while IFS= read -r f; do cat "$f"; done <<<"$frags"
		echo "build procedure $LAB_BUILD_EPOCH"
		gcc --version | head -1
	} | sha256sum | cut -c1-16
}

image_dir() {
	local key
	key=$(kernel_key) || exit 1
	echo "$CACHE/images/$K_NAME-$key"
}

# lab_configure SRC OBJ LOG MAKE...: tinyconfig, then the fragments of the parsed name merged
# with the kernel's merge_config.sh, then olddefconfig. MAKE... is the make command line that
# builds SRC into OBJ. Appends to LOG; returns non-zero (after showing LOG's tail) on failure.
lab_configure() {
	local src=$1 obj=$2 log=$3 frags
	shift 3
	mkdir -p "$obj"
	mapfile -t frags < <(config_fragments)
	{
		"$@" tinyconfig &&
			(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
				"${frags[@]}") &&
			"$@" olddefconfig
	} >>"$log" 2>&1 || { tail -30 "$log" >&2; return 1; }
}

# vm_payload_run NAME KERNEL RUN FILE...: boots KERNEL (vm-run.sh, 180 s) with FILEs and
# perf-buildid's workload libraries in /payload, where the guest runs RUN (a line of shell). The
# work directory, with the console log, is build/NAME/KERNEL. Does not return.
vm_payload_run() {
	local work=$LAB_ROOT/build/$1/$2 kname=$2 run=$3 f
	shift 3
	for f in "$@"; do
		[ -e "$f" ] || die "$f is missing: run make perf-buildid first"
	done
	rm -rf "$work"
	mkdir -p "$work/payload"
	cp "$@" "$LAB_ROOT/build/bin"/libpbidwork*.so "$work/payload/"
	printf '%s\n' "$run" >"$work/payload/run.sh"
	exec "$LAB_ROOT/kernel/scripts/vm-run.sh" -t 180 "$kname" "$work/payload" "$work/console.log"
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
