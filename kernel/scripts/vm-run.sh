#!/usr/bin/env bash
# vm-run.sh [-t TIMEOUT] [-d DISKDIR [-o DISKIMG]] [-m MEM] [-c CPUS] KERNEL PAYLOAD_DIR [LOG]
#
# Boots KERNEL (a lab kernel name) with an initramfs holding busybox and PAYLOAD_DIR at
# /payload, runs /payload/run.sh and streams the console. With -d, DISKDIR's contents are put
# on an ext4 virtio disk mounted at /mnt/blk ($LAB_BLOCK_DIR in the guest); with -o, that disk
# image is kept after the run (read it back with `debugfs -R "dump PATH OUT" DISKIMG`).
# CPUS (default 1) is the guest's vCPUs: races between two tasks inside the kernel need two on a
# kernel that is not preemptible.
#
# Exit status: 0 only if the payload exited 0, the guest powered off by itself, and the console
# shows no panic, oops, WARNING, BUG, KASAN, UBSAN or lockdep report.
#  1 payload failed  2 kernel splat  3 guest hung (killed)  4 guest died without finishing
#  5 lab error (build, qemu)
set -euo pipefail
. "$(dirname "$0")/common.sh"

timeout_s=${LAB_VM_TIMEOUT:-120} diskdir="" mem=512 keepdisk="" cpus=1
while getopts "t:d:m:o:c:" o; do
	case $o in
	c) cpus=$OPTARG ;;
	o) keepdisk=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	d) diskdir=$OPTARG ;;
	m) mem=$OPTARG ;;
	*) exit 5 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: vm-run.sh [-t S] [-d DIR] [-m MB] [-c CPUS] KERNEL PAYLOAD_DIR [LOG]" >&2; exit 5; }
kname=$1 payload=$2
parse_name "$kname"
[ "$K_VARIANT" = kasan ] && [ "$mem" -lt 1024 ] && mem=1024
amem=$(arch_field mem)
[ "$mem" -ge "$amem" ] || mem=$amem
image=$("$LAB_ROOT/kernel/scripts/build.sh" "$kname") || exit 5
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=${3:-$work/console.log}

# pack_initramfs DIR OUT: DIR as a gzip'd newc cpio archive (what the kernel unpacks as its
# initramfs) in OUT.
pack_initramfs() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
}

# initramfs: busybox, /init, the payload, and the shared libraries of its ELF programs
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc}
busybox=/bin/busybox
if ! arch_native; then
	busybox=$("$LAB_ROOT/kernel/scripts/debs.sh" "busybox-static:$(arch_field debarch)")/bin/busybox ||
		exit 5
fi
cp "$busybox" "$root/bin/busybox"
cp "$LAB_ROOT/kernel/scripts/guest-init.sh" "$root/init"
chmod +x "$root/init"
cp -a "$payload" "$root/payload"
while IFS= read -r -d '' f; do
	case $(file -b "$f") in *"dynamically linked"*) ;; *) continue ;; esac
	while IFS= read -r lib; do
		[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
	done < <(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true)
done < <(find "$root/payload" -type f -perm -u+x -print0)
pack_initramfs "$root" "$work/initramfs.gz"

drive=()
if [ -n "$diskdir" ]; then
	size=$(( $(du -sm "$diskdir" | cut -f1) * 2 + 32 ))
	truncate -s "${size}M" "$work/disk.img"
	mkfs.ext4 -q -F -d "$diskdir" "$work/disk.img" >/dev/null
	disk=$(arch_field disk)
	if [ "$disk" = - ]; then
		drive=(-drive "file=$work/disk.img,if=virtio,format=raw")
	else
		# shellcheck disable=SC2054 # commas separate QEMU sub-options
		drive=(-drive "file=$work/disk.img,if=none,format=raw,id=d0" -device "$disk,drive=d0")
	fi
fi

# The architecture's machine; its CPU and accelerator follow.
qemu=("$(arch_field qemu)")
machine=$(arch_field machine)
[ "$machine" = - ] || qemu+=(-M "$machine")
console=$(arch_field console)

# KVM only when a probe boot under it works: /dev/kvm may exist while a KVM guest hangs.
accel=tcg
if ! arch_native; then
	: # a guest of another architecture runs under TCG only
elif [ "${LAB_ACCEL:-auto}" = auto ] && [ -w /dev/kvm ]; then
	probe=$CACHE/kvm-probe.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo x)
	if [ ! -f "$probe" ]; then
		mkdir -p "$work/probe"
		printf 'exit 0\n' >"$work/probe/run.sh"
		prootdir=$work/proot
		mkdir -p "$prootdir/bin"
		cp /bin/busybox "$prootdir/bin/"
		cp "$root/init" "$prootdir/init"
		cp -a "$work/probe" "$prootdir/payload"
		pack_initramfs "$prootdir" "$work/probe.gz"
		if timeout -k 2 15 "${qemu[@]}" -accel kvm -cpu host -m 256 -smp 1 \
			-kernel "$image" -initrd "$work/probe.gz" -no-reboot -display none \
			-serial stdio -monitor none -append "console=$console panic=-1 loglevel=3" \
			</dev/null 2>/dev/null | grep -q '@@LAB-EXIT rc=0@@'; then
			echo kvm >"$probe"
		else
			echo tcg >"$probe"
		fi
	fi
	accel=$(cat "$probe")
elif [ "${LAB_ACCEL:-auto}" != auto ]; then
	accel=$LAB_ACCEL
fi
cpu=$(arch_field cpu)
[ "$accel" = kvm ] && cpu=host
qemu+=(-accel "$accel" -cpu "$cpu")

progress "vm $kname" "boot ($accel, ${mem}M, $cpus CPU, timeout ${timeout_s}s)"
t0=$(date +%s)
set +e
# The console line by line (tr alone holds 4 KiB back): a guest that hangs and is killed
# leaves its last lines in the log.
timeout -k 5 "$timeout_s" "${qemu[@]}" -m "$mem" -smp "$cpus" \
	-kernel "$image" -initrd "$work/initramfs.gz" "${drive[@]}" \
	-append "console=$console panic=-1 loglevel=5 ${LAB_CMDLINE:-}" \
	-no-reboot -display none -serial stdio -monitor none </dev/null 2>"$work/qemu.err" |
	stdbuf -oL tr -d '\r' | tee "$log" | sed -n '/@@LAB-START/,/@@LAB-EXIT/p'
qrc=${PIPESTATUS[0]}
set -e
elapsed=$(( $(date +%s) - t0 ))
[ -n "$keepdisk" ] && [ -f "$work/disk.img" ] && cp "$work/disk.img" "$keepdisk"

# keep_console: a copy of a failed run's console outside the clone (CI's clone is removed),
# the newest 20 kept; lab-selftest.sh's deliberate failures are not kept.
keep_console() {
	[ -z "${LAB_NO_KEEP:-}" ] || return 0
	local dir=$CACHE/failed-consoles
	mkdir -p "$dir"
	cp "$log" "$dir/$(date -u +%Y%m%dT%H%M%S)-$kname.log"
	echo "lab: console kept in $dir" >&2
	find "$dir" -name '*.log' | sort -r | tail -n +21 | while IFS= read -r old; do rm -f "$old"; done
}

splat=$(grep -nE 'Kernel panic|Oops|WARNING:|BUG:|KASAN|UBSAN|general protection fault|possible circular locking|sleeping function called|INFO: task .* blocked|detected stall|Call Trace:' "$log" | head -20 || true)
hung=0
{ [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; } && hung=1
# A guest that hung after the kernel said why (an RCU stall, a lockup) failed by that report.
if [ -z "$splat" ] && [ "$hung" = 1 ]; then
	echo "lab: FAIL: guest $kname hung: killed after ${timeout_s}s. Console tail:" >&2
	tail -25 "$log" >&2
	keep_console
	exit 3
fi
if [ -n "$splat" ]; then
	[ "$hung" = 0 ] || echo "lab: FAIL: guest $kname hung: killed after ${timeout_s}s" >&2
	echo "lab: FAIL: kernel $kname reported problems on the console:" >&2
	echo "$splat" >&2
	keep_console
	exit 2
fi
if ! grep -q '@@LAB-EXIT' "$log"; then
	echo "lab: FAIL: guest $kname stopped before the payload finished (qemu exit $qrc). Console tail:" >&2
	tail -25 "$log" >&2
	cat "$work/qemu.err" >&2
	keep_console
	exit 4
fi
prc=$(sed -n 's/.*@@LAB-EXIT rc=\([0-9]*\)@@.*/\1/p' "$log" | tail -1)
progress "vm $kname" "powered off after ${elapsed}s, payload exit $prc"
[ "$prc" = 0 ] || { echo "lab: FAIL: the payload on $kname exited $prc" >&2; exit 1; }
exit 0
