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
#   fixes     the directory under kernel/patches that -fixes applies (git am) before the
#             series: fixes of the base's own bugs that the project found, not part of the
#             backport
#   rt        the PREEMPT_RT patch that -rt applies (patch -p1), as Debian ships it
#   upstream  "yes" when the base itself puts build IDs in PERF_RECORD_MMAP2. The plain kernel
#             of a base without them (no -buildid, -rt or variant) gets bpf.config: it is where
#             perf-buildid record's BPF path is tested.
#   debian    Debian's own build of the base that abi-check compares CRCs with: the version of
#             its linux-config and linux-headers packages, and its ABI name
# shellcheck disable=SC2034 # read through lab_field
LAB_BASES_FIELDS=(base package series fixes rt upstream debian)
# shellcheck disable=SC2034
LAB_BASES=(
	"5.10 linux-source-5.10 linux-5.10 linux-5.10-fixes /usr/src/linux-patch-5.10-rt.patch.xz -
		5.10.262-1/5.10.0-46"
	"6.12 linux-source-6.12 - - - yes -"
)

# The architectures, one line each: everything the scripts know about one. The first is the
# host's, the reference the others' verdicts are compared with (make vm-test-arm64) and the
# one whose module ABI abi-check compares (with Debian's amd64 build as well). Adding an
# architecture is a line here, its config fragment in kernel/configs and its compiler, QEMU and
# libc packages in scripts/install-deps.sh. Fields, "-" for none:
#   arch      its name: K_ARCH, the suffix of the kernel names (-arm64), not written for the first
#   karch     the kernel's ARCH= (its arch/ directory)
#   cross     the CROSS_COMPILE prefix of its compiler (the kernel's and the selftests')
#   image     the make target that builds the bootable image, and its file in arch/KARCH/boot
#   qemu      the QEMU system emulator that boots it
#   machine   QEMU's -M
#   cpu       QEMU's -cpu under TCG (under KVM, which only the host's architecture gets: host)
#   console   the serial console device (console= on the kernel command line)
#   disk      the QEMU device of the ext4 disk, on a drive of its own; "-": -drive if=virtio
#   pages     its page sizes, comma-separated; the first is the default, another is a suffix of
#             the name (-arm64-64k) and the fragment kernel/configs/ARCH-SIZE.config, whose
#             options must all survive olddefconfig
#   endian    little or big: its byte order; vm-test.sh checks the cross-built selftests against
#             it (the tests and fixtures take theirs from the compiler)
#   debarch   its Debian architecture: busybox-static:DEBARCH is the guest's busybox; when it is
#             the machine's own (dpkg --print-architecture), the host's busybox and KVM serve
#   mem       the least memory its guests get, in MiB: the 32-bit ones get more than their
#             kernel maps directly (about 900 MiB), so that the page cache lives in HIGHMEM
#   config    the fragment under kernel/configs its guest needs on top of base.config and
#             block.config
#   required  the options of its guest (console, disk) that must survive olddefconfig,
#             comma-separated
# shellcheck disable=SC2034 # read through lab_field
LAB_ARCHES_FIELDS=(arch karch cross image qemu machine cpu console disk pages endian debarch mem
	config required)
# shellcheck disable=SC2034,SC2054 # read through lab_field; commas separate lists and QEMU options
LAB_ARCHES=(
	"x86_64 x86_64 - bzImage qemu-system-x86_64 - max ttyS0 - 4k little amd64 512 -
		CONFIG_SERIAL_8250_CONSOLE"
	# virt with a CPU that has the 4 KiB and 64 KiB granules (pointer authentication with
	# QEMU's cheap algorithm: the architected one is slow under TCG); the disk on virtio-pci
	"arm64 arm64 aarch64-linux-gnu- Image qemu-system-aarch64 virt max,pauth-impdef=on ttyAMA0
		virtio-blk-pci 4k,64k little arm64 512 arm64.config
		CONFIG_SERIAL_AMBA_PL011_CONSOLE,CONFIG_VIRTIO_BLK"
	# Debian 11 LTS's 32-bit architectures, with HIGHMEM: i386 as its 686-pae flavour on the
	# PC machine, armhf as its armmp-lpae flavour on virt (a Cortex-A15 has LPAE)
	"i386 i386 i686-linux-gnu- bzImage qemu-system-i386 - max ttyS0 - 4k little i386 2048
		i386.config CONFIG_SERIAL_8250_CONSOLE,CONFIG_HIGHMEM64G"
	"armhf arm arm-linux-gnueabihf- zImage qemu-system-arm virt,highmem=off cortex-a15 ttyAMA0
		virtio-blk-pci 4k little armhf 2048 armhf.config
		CONFIG_SERIAL_AMBA_PL011_CONSOLE,CONFIG_VIRTIO_BLK,CONFIG_ARM_LPAE,CONFIG_HIGHMEM"
	# big-endian: the SCLP console and the disk on virtio-ccw
	"s390x s390 s390x-linux-gnu- bzImage qemu-system-s390x s390-ccw-virtio max ttysclp0
		virtio-blk-ccw 4k big s390x 512 s390x.config
		CONFIG_SCLP_VT220_CONSOLE,CONFIG_S390_GUEST,CONFIG_VIRTIO_BLK"
)

# The kernels the project tests, one line each (any other name builds and boots as well):
#   name    a kernel name (parse_name)
#   check   the steps of make check (scripts/check.sh) that run on it, comma-separated:
#           vm-test (make vm-test KERNEL=NAME), vm-perf (kernel/scripts/vm-perf.sh NAME),
#           vm-test-arch (make vm-test-arch ARCH_KERNELS=NAME: a kernel of another
#           architecture, its verdicts against x86_64's), check-arches (make check-arches, not
#           in check); "-": none. The other
#           steps name their kernels themselves: vm-test-rt (5.10-rt-buildid), abi-check
#           (BASE, BASE-buildid), vm-modules (5.10-buildid), lab-selftest, vm-bpf, vm-coverage
#           and vm-perf-5.10.
# shellcheck disable=SC2034 # read through lab_field
LAB_KERNELS_FIELDS=(name check)
# shellcheck disable=SC2034 # read through lab_field
LAB_KERNELS=(
	"5.10-buildid vm-test,vm-perf"
	"5.10 vm-test,vm-perf"
	"6.12 vm-test"
	"5.10-buildid-kasan vm-test"
	"5.10-rt-buildid -"
	"5.10-buildid-arm64 vm-test-arch"
	# the 64 KiB-page kernel stays out of check: one more kernel build, about 6 min cold
	"5.10-buildid-arm64-64k -"
	# Debian 11 LTS's 32-bit architectures and big-endian s390x (make check-arches): each one
	# more kernel build, which check's cold time (over its budget already) cannot take
	"5.10-buildid-i386 check-arches"
	"5.10-i386 check-arches"
	"5.10-buildid-armhf check-arches"
	"5.10-buildid-s390x check-arches"
	# 5.10's vmacache race (make vm-exec-race): pristine 5.10 without and with its fix, at -Os
	# (where the Oops was found) and at -O2
	"5.10-os -"
	"5.10-fixes-os -"
	"5.10-fixes -"
)

# lab_rows TABLE: the rows of TABLE (LAB_BASES, LAB_ARCHES, LAB_KERNELS), one a line: a row
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
# arch_field FIELD: FIELD of the parsed kernel's architecture.
arch_field() { lab_field LAB_ARCHES "$K_ARCH" "$1"; }

# arch_native: the parsed kernel's architecture is the machine's own.
arch_native() { [ "$(arch_field debarch)" = "$(dpkg --print-architecture)" ]; }

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
# PREEMPT_RT patch, applied last: over the series and the fixes, as Debian applies it), K_FIXES (0|1: the base's fixes under the series, their
# directory in FIXES_DIR), K_VARIANT (""|kasan|os; os: -Os instead of base.config's -O2),
# K_ARCH (an architecture of LAB_ARCHES: arch_field reads its row), K_PAGES (one of its page
# sizes), K_FEATURE (1 when the kernel puts build IDs in MMAP2, from the series or upstream),
# K_UPSTREAM (its base has them
# upstream: yes|-), and from the base's line the source package (K_PACKAGE), SERIES_DIR and
# RT_PATCH. NAME is BASE[-rt][-fixes][-buildid][-ARCH[-PAGES]][-kasan|-os]:
# no ARCH is the first of LAB_ARCHES, no PAGES the first page size of ARCH.
# LAB_SERIES_DIR lets experiments (a deliberately broken series, an injected WARN_ON) use
# another series without touching the committed one; the cache key follows its content.
parse_name() {
	local n=$1 a arches pages
	mapfile -t arches < <(lab_keys LAB_ARCHES)
	K_NAME=$n K_VARIANT="" K_PATCHED=0 K_RT=0 K_FIXES=0 K_ARCH=${arches[0]} K_PAGES=""
	case $n in
	*-kasan) K_VARIANT=kasan; n=${n%-kasan} ;;
	*-os) K_VARIANT=os; n=${n%-os} ;;
	esac
	case $n in *-[0-9]*k) K_PAGES=${n##*-}; n=${n%-*} ;; esac
	for a in "${arches[@]:1}"; do
		case $n in *-"$a") K_ARCH=$a; n=${n%-"$a"}; break ;; esac
	done
	case $n in *-buildid) K_PATCHED=1; n=${n%-buildid} ;; esac
	case $n in *-fixes) K_FIXES=1; n=${n%-fixes} ;; esac
	case $n in *-rt) K_RT=1; n=${n%-rt} ;; esac
	K_BASE=$n
	local series rt fixes
	# shellcheck disable=SC2034 # K_PACKAGE and K_FEATURE are for the scripts
	K_PACKAGE=$(base_field "$K_BASE" package) ||
		die "unknown kernel '$1': NAME is BASE[-rt][-fixes][-buildid][-ARCH[-PAGES]][-kasan|-os], BASE one of: $(lab_bases | paste -sd' '), ARCH one of: ${arches[*]:1} (LAB_BASES, LAB_ARCHES in kernel/scripts/common.sh)"
	series=$(base_field "$K_BASE" series)
	rt=$(base_field "$K_BASE" rt)
	fixes=$(base_field "$K_BASE" fixes)
	K_UPSTREAM=$(base_field "$K_BASE" upstream)
	SERIES_DIR="" RT_PATCH=$rt
	[ "$series" = - ] || SERIES_DIR=${LAB_SERIES_DIR:-$LAB_ROOT/kernel/patches/$series}
	FIXES_DIR=""
	[ "$fixes" = - ] || FIXES_DIR=$LAB_ROOT/kernel/patches/$fixes
	pages=$(arch_field pages)
	if [ -z "$K_PAGES" ]; then
		K_PAGES=${pages%%,*}
	elif [ "$K_PAGES" = "${pages%%,*}" ] || [[ ,$pages, != *,"$K_PAGES",* ]]; then
		die "'$1': -$K_PAGES is not a page size of $K_ARCH (its sizes: $pages; the first, its default, is not written)"
	fi
	if [ "$K_PATCHED" = 1 ] && [ "$series" = - ]; then
		die "'$1': no series applies to $K_BASE (bases with one: $(lab_bases series | paste -sd' '))"
	fi
	if [ "$K_FIXES" = 1 ] && [ "$fixes" = - ]; then
		die "'$1': no fixes for $K_BASE (bases with them: $(lab_bases fixes | paste -sd' '))"
	fi
	if [ "$K_RT" = 1 ] && [ "$rt" = - ]; then
		die "'$1': no RT patch for $K_BASE (bases with one: $(lab_bases rt | paste -sd' '))"
	fi
	K_FEATURE=$K_PATCHED
	# shellcheck disable=SC2034
	[ "$K_UPSTREAM" = - ] || K_FEATURE=1
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

# series_hash [DIR]: a hash of the patches of the series in DIR (SERIES_DIR by default).
series_hash() {
	local f SERIES_DIR=${1:-$SERIES_DIR}
	read_series
	{ for f in "${SERIES[@]}"; do sha256sum <"$f"; done; } | sha256sum | cut -c1-16
}

config_fragments() {
	# The same guest everywhere (options of other architectures are dropped by
	# olddefconfig), plus what the architecture's machine and page size need.
	echo "$CONFIGS/base.config"
	echo "$CONFIGS/block.config"
	local frag
	frag=$(arch_field config)
	[ "$frag" = - ] || echo "$CONFIGS/$frag"
	page_fragment
	[ "$K_RT" = 1 ] && echo "$CONFIGS/rt.config"
	# BPF on perf events everywhere, as in Debian's config: perf-buildid record's BPF path on
	# the kernels without the feature, and the stack map's build IDs beside MMAP2's on all.
	echo "$CONFIGS/bpf.config"
	[ "$K_VARIANT" = kasan ] && echo "$CONFIGS/kasan.config"
	# Last: -Os over base.config's -O2.
	[ "$K_VARIANT" = os ] && echo "$CONFIGS/size.config"
	return 0
}

# page_fragment: the config fragment of the parsed kernel's page size, when it is not its
# architecture's default.
page_fragment() {
	local pages
	pages=$(arch_field pages)
	[ "$K_PAGES" = "${pages%%,*}" ] || echo "$CONFIGS/$K_ARCH-$K_PAGES.config"
}

# Bump when build.sh changes what it produces (not for cosmetic changes: every bump rebuilds
# every kernel).
LAB_BUILD_EPOCH=2

# kernel_key: a hash of everything that determines the built image.
# Every input is read first: inside the pipe, a failure (no linux-source package, a series
# naming a missing patch, say) would only leave a blank in the key.
kernel_key() {
	local version frags f series="" rt="" fixes=""
	version=$(pkg_version "$K_BASE") || exit 1
	frags=$(config_fragments) || exit 1
	if [ "$K_PATCHED" = 1 ]; then series=$(series_hash) || exit 1; fi
	if [ "$K_FIXES" = 1 ]; then fixes=$(series_hash "$FIXES_DIR") || exit 1; fi
	if [ "$K_RT" = 1 ]; then rt=$(sha256sum <"$RT_PATCH") || exit 1; fi
	{
		echo "$K_NAME $version"
		[ -z "$series" ] || echo "$series"
		# RT on top of the series and the fixes, as Debian applies it
		[ -z "$rt" ] || echo "rt last $rt"
		[ -z "$fixes" ] || echo "fixes $fixes"
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

# selftests_build SRC IMGDIR OUT: the perf_events selftests (and buildid_stress) built against
# the parsed kernel's tree SRC and its exported headers in IMGDIR, objects in OUT/obj,
# installed in OUT/payload/perf_events, the log in OUT/build.log. Sets SELFTESTS_MAKEVARS, the
# make variables of that build. Dies when the build fails.
#
# A build is kept in $CACHE/selftests under the hash of everything it is made from: the
# sources' contents (not their times, which a fresh clone resets), SRC's harness and lib.mk,
# IMGDIR (whose name carries the kernel's key, so its headers), the make variables and the
# versions of the tools that compile and link the programs and the fixtures. A check builds
# each kernel's programs once, not once per clone.
selftests_build() {
	local src=$1 imgdir=$2 out=$3 st=$LAB_ROOT/tools/testing/selftests/perf_events cross
	local key cache prefix
	SELFTESTS_MAKEVARS=(KSRC="$src" KHDR_INCLUDES="-isystem $imgdir/include" OUTPUT="$out/obj"
		LDFLAGS=-static)
	cross=$(arch_field cross)
	[ "$cross" = - ] || SELFTESTS_MAKEVARS+=(ARCH="$(arch_field karch)" CROSS_COMPILE="$cross")
	[ "$cross" = - ] && prefix= || prefix=$cross
	key=$({
		echo "epoch 1"
		printf '%s\n' "${SELFTESTS_MAKEVARS[@]}" | grep -v '^OUTPUT='
		(cd "$st" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		sha256sum "$src"/tools/testing/selftests/{lib.mk,kselftest_harness.h,kselftest.h}
		local tool
		for tool in "${prefix}gcc" "${prefix}ld" "${prefix}readelf" gcc; do
			"$tool" --version 2>&1 | head -1
		done
	} | sha256sum | cut -c1-16)
	cache=$CACHE/selftests/$K_NAME-$key
	mkdir -p "$out/payload/perf_events"
	if [ -f "$cache/.done" ]; then
		echo "selftests of $K_NAME from $cache" >"$out/build.log"
		cp -a "$cache/payload/." "$out/payload/perf_events/"
		touch -c "$cache"
		return 0
	fi
	make -s --no-print-directory -j"$(nproc)" -C "$st" "${SELFTESTS_MAKEVARS[@]}" all \
		>"$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "selftests failed to build against $K_NAME"; }
	make -s --no-print-directory -C "$st" "${SELFTESTS_MAKEVARS[@]}" install \
		INSTALL_PATH="$out/payload/perf_events" >>"$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "selftest install failed"; }
	# Kept for the next clone; builds unused for 30 days go (a few MB each). An entry never
	# changes once there: a clone that built the same one at the same time leaves it (another
	# may be copying it) and drops its own; one left half-made by a crash has no .done.
	rm -rf "$cache.tmp.$$"
	mkdir -p "$cache.tmp.$$"
	cp -a "$out/payload/perf_events" "$cache.tmp.$$/payload"
	touch "$cache.tmp.$$/.done"
	[ -f "$cache/.done" ] || rm -rf "$cache"
	mv -T "$cache.tmp.$$" "$cache" 2>/dev/null || rm -rf "$cache.tmp.$$"
	find "$CACHE/selftests" -mindepth 1 -maxdepth 1 -type d -mtime +30 -exec rm -rf {} + \
		2>/dev/null || true
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
