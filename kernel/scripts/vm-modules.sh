#!/usr/bin/env bash
# vm-modules.sh [KERNEL]: kernel modules recorded by build ID. KERNEL (default 5.10-buildid; every
# lab kernel has loadable modules with modversions) boots; the guest loads two test
# modules (tools/perf/tests/modules, built here against the kernel's object tree) and records with
# perf-buildid record -a while each module's code runs (tools/perf/tests/modules-guest.sh). The
# kernel writes no record when a module loads: record synthesizes a kernel mapping per module from
# /proc/modules, with the module's own build ID from sysfs. Back on the host
# (tools/perf/tests/modules-host.sh): each module with samples is listed with the build ID readelf
# reads from its .ko, by perf-buildid and by perf; and report names the modules' functions from the
# .ko files found by build ID alone.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=${1:-5.10-buildid}
parse_name "$kname"
# The test modules are built with the host's compiler, and the payload is the host's perf-buildid.
[ "$K_ARCH" = "$(lab_keys LAB_ARCHES | head -1)" ] ||
	die "$kname: the modules guest runs on the host's architecture only"
bin=$LAB_ROOT/build/bin
tests=$LAB_ROOT/tools/perf/tests
work=$LAB_ROOT/build/vm-modules/$kname
[ -x "$bin/perf-buildid" ] || die "$bin/perf-buildid is missing: run make perf-buildid first"
for t in perf readelf debugfs; do
	command -v "$t" >/dev/null || die "$t is missing (make deps installs it)"
done
"$LAB_ROOT/kernel/scripts/build.sh" "$kname" >/dev/null
imgdir=$(image_dir)
rm -rf "$work"
mkdir -p "$work/payload" "$work/disk" "$work/modules"
cp "$tests/modules/Kbuild" "$tests/modules"/*.[ch] "$work/modules/"
src=$(cat "$imgdir/source")
# External modules are built in the kernel's object tree, which must be the image's. A build of
# another series in the same tree (make abi-check-negative, a mutation run, LAB_SERIES_DIR)
# leaves it another kernel's: the image is then built again there, incrementally, and ccache has
# its objects. The check and the modules' build hold the build lock, so that no such build
# changes the tree in between; build.sh takes it itself.
obj=$CACHE/build/$K_NAME
build_test_modules() {
	cmp -s "$obj/vmlinux" "$imgdir/vmlinux" || return 3
	make -s -C "$src" O="$obj" M="$work/modules" modules >"$work/modules.log" 2>&1
}
for attempt in 1 2; do
	progress "vm-modules $kname" "build the test modules"
	rc=0
	with_lock "$CACHE/lock.build" build_test_modules || rc=$?
	[ "$rc" = 3 ] || break
	[ "$attempt" = 1 ] || die "$obj is not the tree of $imgdir after building $kname again"
	progress "vm-modules $kname" "$obj holds another series' build: building $kname there again"
	rm -f "$imgdir/.done"
	"$LAB_ROOT/kernel/scripts/build.sh" "$kname" >/dev/null
done
[ "$rc" = 0 ] || { cat "$work/modules.log" >&2 || true; die "the test modules did not build against $kname"; }
cp "$bin/perf-buildid" "$work/modules"/pbid_mod_[ab].ko "$tests/modules-guest.sh" "$work/payload/"
# shellcheck disable=SC2016 # expanded in the guest
echo 'sh ./modules-guest.sh /payload/perf-buildid /payload "$LAB_BLOCK_DIR"' >"$work/payload/run.sh"
"$LAB_ROOT/kernel/scripts/vm-run.sh" -t 180 -d "$work/disk" -o "$work/disk.img" \
	"$kname" "$work/payload" "$work/console.log" || die "the guest part failed: $work/console.log"
mkdir -p "$work/out"
debugfs -R "rdump / $work/out" "$work/disk.img" >/dev/null 2>&1 ||
	die "cannot read the guest's disk back"
"$tests/modules-host.sh" "$bin/perf-buildid" "$work/modules" "$work/out"
