#!/usr/bin/env bash
# make run: the main job. Boots the patched 5.10 kernel (5.10-buildid) in QEMU, records a
# workload there with `perf-buildid record`, and shows what a profiler user gets: the
# workload's mappings with their build IDs (and which ones fell back to dev/ino), then - back on
# the host, where the symbols are - a report symbolized by build ID.
set -euo pipefail
cd "$(dirname "$0")/.."
. kernel/scripts/common.sh
KERNEL=${KERNEL:-5.10-buildid}

make --no-print-directory -s perf-buildid >/dev/null
bin=$LAB_ROOT/build/bin
[ -x "$bin/perf-buildid" ] || die "build/bin/perf-buildid was not built"
[ -x "$bin/pbid-workload" ] || die "build/bin/pbid-workload was not built"

work=$LAB_ROOT/build/run
rm -rf "$work"
mkdir -p "$work/payload" "$work/disk"
cp "$bin/perf-buildid" "$work/payload/"
# The guest is the production machine: the workload runs stripped. Its symbols stay on the
# host, filed by build ID, as a distribution's debug packages file them.
strip -o "$work/payload/pbid-workload" "$bin/pbid-workload"
strip -o "$work/payload/libpbidwork.so" "$bin/libpbidwork.so"
debug=$work/debug
for f in pbid-workload libpbidwork.so; do
	id=$(readelf -n "$bin/$f" | sed -n 's/.*Build ID: //p')
	mkdir -p "$debug/.build-id/${id:0:2}"
	cp "$bin/$f" "$debug/.build-id/${id:0:2}/${id:2}.debug"
done
cat >"$work/payload/run.sh" <<'GUEST'
set -e
export LD_LIBRARY_PATH=/payload
echo "== perf-buildid record -F 999 -g -- pbid-workload 600 (kernel $(uname -r))"
./perf-buildid record -F 999 -g -o "$LAB_BLOCK_DIR/perf.data" -- ./pbid-workload 600
echo
echo "== perf-buildid maps (every MMAP2 of the recording: build ID, or dev/ino when the kernel fell back)"
./perf-buildid maps -i "$LAB_BLOCK_DIR/perf.data"
echo
echo "== perf-buildid buildid-list"
./perf-buildid buildid-list -i "$LAB_BLOCK_DIR/perf.data"
GUEST

# The guest kernel's symbols, filed by its build ID like any other ELF file.
image=$(kernel/scripts/build.sh "$KERNEL")
if [ -f "$(dirname "$image")/vmlinux" ]; then
	id=$(readelf -n "$(dirname "$image")/vmlinux" | sed -n 's/.*Build ID: //p' | head -1)
	[ -n "$id" ] && mkdir -p "$debug/.build-id/${id:0:2}" &&
		cp "$(dirname "$image")/vmlinux" "$debug/.build-id/${id:0:2}/${id:2}.debug"
fi

progress run "record a workload on $KERNEL"
kernel/scripts/vm-run.sh -t 180 -d "$work/disk" -o "$work/disk.img" "$KERNEL" "$work/payload"
debugfs -R "dump /perf.data $work/perf.data" "$work/disk.img" >/dev/null 2>&1 ||
	die "could not read perf.data back from the VM's disk"
echo
echo "== back on the host: perf-buildid report (symbols found by build ID, not by path)"
"$bin/perf-buildid" report -i "$work/perf.data" --stdio --no-debuginfod --debug-dir "$debug"
echo
echo "The recording is in $work/perf.data (perf report -i $work/perf.data reads it too)."
