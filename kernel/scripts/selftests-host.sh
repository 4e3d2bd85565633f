#!/usr/bin/env bash
# selftests-host.sh: build the perf_events selftests against 6.12's harness and exported
# headers (no kernel build needed) and run them on this machine's kernel. Informational only:
# a host kernel can carry bugs the suite is right to report (6.18.44 leaks misc bit 14).
set -euo pipefail
. "$(dirname "$0")/common.sh"
src=$("$LAB_ROOT/kernel/scripts/source.sh" 6.12)
out=$LAB_ROOT/build/selftests/host
hdr=$CACHE/headers/6.12-$(pkg_version 6.12)
if [ ! -d "$hdr/include" ]; then
	progress "selftests-host" "headers_install from 6.12"
	make -s -C "$src" O="$hdr.obj" ARCH=x86_64 headers_install INSTALL_HDR_PATH="$hdr" >/dev/null
	rm -rf "$hdr.obj"
fi
st=$LAB_ROOT/tools/testing/selftests/perf_events
rm -rf "$out"; mkdir -p "$out/obj" "$out/run"
mkvars=(KSRC="$src" KHDR_INCLUDES="-isystem $hdr/include" OUTPUT="$out/obj")
make -s --no-print-directory -C "$st" "${mkvars[@]}" all install INSTALL_PATH="$out/run" >/dev/null
mapfile -t progs < <(make -s --no-print-directory -C "$st" "${mkvars[@]}" emit_tests |
	sed -n 's/^perf_events://p')
[ "${#progs[@]}" -gt 0 ] || die "no selftests listed by emit_tests"
echo "# host kernel $(uname -r)"
# The build dir sits on the clone's file system; when that is block-backed the page-cache-miss
# case runs here too.
case $(stat -f -c %T "$out/run") in
tmpfs|ramfs|overlayfs|nfs*|fuse*) ;;
*) export BUILDID_BLOCK_DIR=$out/run ;;
esac
rc=0
cd "$out/run"
for p in "${progs[@]}"; do
	echo "# selftests: perf_events: $p"
	./"$p" || { r=$?; [ $r = 4 ] || rc=1; }
done
exit $rc
