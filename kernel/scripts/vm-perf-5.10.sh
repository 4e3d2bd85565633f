#!/usr/bin/env bash
# vm-perf-5.10.sh KERNEL: Debian 11's perf with the tools series (perf-5.10.sh) in the VM on
# KERNEL, with kernel/scripts/perf-5.10-guest.sh: on 5.10-buildid, record --buildid-mmap,
# buildid-list, report, script, report -D, annotate, inject, and interop both ways with perf
# 6.1 (this machine's /usr/bin/perf) and perf-buildid; on pristine 5.10, --buildid-mmap must be
# refused. The ids are compared with what readelf says on the host.
#
# PERF510=PATH tests another perf-5.10 binary (e.g. `perf-5.10.sh --unpatched`, which must
# fail). Exit status is vm-run.sh's.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kname=${1:-}
case $kname in
5.10-buildid) mode=buildid ;;
5.10) mode=pristine ;;
*) die "usage: vm-perf-5.10.sh 5.10-buildid|5.10" ;;
esac

bin=$LAB_ROOT/build/bin
for f in perf-buildid pbid-workload pbid-workload.buildids libpbidwork.so; do
	[ -e "$bin/$f" ] || die "$bin/$f is missing: run make perf-buildid first"
done
perf510=${PERF510:-$("$LAB_ROOT/kernel/scripts/perf-5.10.sh")}
[ -x "$perf510" ] || die "no perf-5.10 binary at '$perf510'"
[ -x /usr/bin/perf ] || die "/usr/bin/perf (Debian's linux-perf) is missing"

work=$LAB_ROOT/build/vm-perf-5.10/$kname
rm -rf "$work"
mkdir -p "$work/payload/bin"
p=$work/payload
cp "$perf510" "$p/perf-5.10"
cp /usr/bin/perf "$p/perf-6.1"
cp "$bin/perf-buildid" "$bin/pbid-workload" "$bin/pbid-workload.buildids" "$bin/libpbidwork.so" "$p/"
# perf annotate disassembles with objdump
cp /usr/bin/objdump "$p/bin/objdump"
cp "$LAB_ROOT/kernel/scripts/perf-5.10-guest.sh" "$p/"
# The ids the guest compares with: readelf's, here, on the very files copied in.
for f in pbid-workload libpbidwork.so; do
	id=$(readelf -n "$p/$f" | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] || die "readelf finds no build id in $f"
	grep -qx "$id $f" "$bin/pbid-workload.buildids" ||
		die "$f: readelf says $id, pbid-workload.buildids disagrees"
done
cat >"$p/run.sh" <<GUEST
PATH=/payload/bin:\$PATH LD_LIBRARY_PATH=/payload sh ./perf-5.10-guest.sh $mode /payload
GUEST
disk=()
if [ "$mode" = buildid ]; then
	mkdir -p "$work/disk"
	disk=(-d "$work/disk" -o "$work/disk.img")
fi
rc=0
"$LAB_ROOT/kernel/scripts/vm-run.sh" -t 300 -m 1024 "${disk[@]}" "$kname" "$p" "$work/console.log" ||
	rc=$?
nok=$(grep -c '^ok ' "$work/console.log" || true)
nbad=$(grep -c '^not ok ' "$work/console.log" || true)

# On the host, with the file perf-5.10 recorded in the guest: bit 14 of an MMAP2 record is a
# build id only if the record's event asked for build ids. Clear attr.build_id in the file's
# attrs (the records are unchanged, bit 14 included, as a kernel that leaks the bit onto
# other events' records would leave them) and the ids must be gone from what perf-5.10 shows.
host_check() {  # host_check DESCRIPTION COMMAND...
	local d=$1
	shift
	if "$@"; then echo "ok - host: $d"; nok=$((nok + 1)); else echo "not ok - host: $d"; nbad=$((nbad + 1)); fi
}
if [ "$mode" = buildid ] && [ "$rc" = 0 ]; then
	h=$work/host
	mkdir -p "$h"
	debugfs -R "dump a.data $h/a.data" "$work/disk.img" >/dev/null 2>&1 || true
	if [ ! -s "$h/a.data" ]; then
		host_check "the guest's perf.data came back" false
	else
		lib_id=$(awk '$2 == "libpbidwork.so" { print $1 }' "$bin/pbid-workload.buildids")
		python3 - "$h/a.data" "$h/noattr.data" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
magic, _, attr_size, attrs_off, attrs_size = struct.unpack_from("<8sQQQQ", data, 0)
assert magic == b"PERFILE2", magic
n = 0
for off in range(attrs_off, attrs_off + attrs_size, attr_size):
    flags = struct.unpack_from("<Q", data, off + 40)[0]
    if flags & (1 << 34):
        n += 1
    struct.pack_into("<Q", data, off + 40, flags & ~(1 << 34))
assert n > 0, "no attr with build_id in the file"
open(sys.argv[2], "wb").write(data)
PY
		"$perf510" script --show-mmap-events -i "$h/a.data" >"$h/a.script" 2>/dev/null || true
		"$perf510" script --show-mmap-events -i "$h/noattr.data" >"$h/noattr.script" 2>/dev/null || true
		"$perf510" buildid-list -i "$h/noattr.data" >"$h/noattr.bid" 2>/dev/null || true
		grep -m 2 'libpbidwork' "$h/noattr.script" | sed 's/^/# host, attr.build_id cleared: /'
		host_check "the guest's file shows the library's id" \
			grep -q "<$lib_id>\]: r-xp /payload/libpbidwork.so\$" "$h/a.script"
		host_check "attr.build_id cleared: the same records show dev/ino, not an id" \
			bash -c "grep -Eq '@ 0x[0-9a-f]+ [0-9a-f]+:[0-9a-f]+ [0-9]+ [0-9]+\]: r-xp /payload/libpbidwork.so\$' '$h/noattr.script' &&
				! grep -Eq '<[0-9a-f]{8,}>' '$h/noattr.script'"
		host_check "attr.build_id cleared: buildid-list takes no id from the records" \
			bash -c "! grep -q '$lib_id' '$h/noattr.bid'"
	fi
	[ "$nbad" = 0 ] || rc=1
fi

line="perf-5.10 on $kname: $nok ok, $nbad not ok"
echo "$line"
[ -n "${LAB_SUMMARY:-}" ] && echo "$line" >>"$LAB_SUMMARY"
exit "$rc"
