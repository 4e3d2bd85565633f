#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Builds the ELF fixtures for the build-ID mmap2 selftests into OUTDIR.
# Usage: mkfixtures.sh OUTDIR GEN_FIXTURES   (CC, LD, READELF from the environment)
#
# g_* files come from the real toolchain, with the ids it chooses; their
# NAME.id sidecar is readelf's answer.  c_* and m_* files come from
# gen_fixtures (crafted layouts and malformed files); its c_* sidecars are
# checked against readelf here, so a generator bug cannot hide behind its
# own sidecar.  A sidecar exists exactly for the files that must yield an id.
set -eu

out=$1
gen=$2
src=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-gcc}
LD=${LD:-ld}
READELF=${READELF:-readelf}
tmp=$out/.obj
mkdir -p "$out" "$tmp"

# readelf prints one "Build ID:" per NT_GNU_BUILD_ID note; the kernel takes
# the first with 1..20 bytes.
readelf_id() {
	"$READELF" -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p' |
		awk 'length($0) >= 2 && length($0) <= 40 { print; exit }'
}

id_of() {
	id=$(readelf_id "$out/$1")
	[ -n "$id" ] || { echo "mkfixtures: readelf finds no build ID in $1" >&2; exit 1; }
	echo "$id" >"$out/$1.id"
}

# A static x86_64 program that exits at once: runnable in the busybox guest
# (the inherit test execs it), no libc needed.
cat >"$tmp/exit64.c" <<'EOF'
void _start(void)
{
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
	for (;;)
		;
}
EOF
cat >"$tmp/exit32.c" <<'EOF'
void _start(void)
{
	__asm__ volatile("mov $1, %eax\n\txor %ebx, %ebx\n\tint $0x80");
	for (;;)
		;
}
EOF
cat >"$tmp/main.c" <<'EOF'
#include <stdio.h>
int main(void)
{
	puts("build-id fixture");
	return 0;
}
EOF

nolibc="-nostdlib -static -fno-pic -no-pie -fno-stack-protector -O2"
for kind in sha1 md5 uuid; do
	$CC $nolibc -Wl,--build-id=$kind -o "$out/g_$kind" "$tmp/exit64.c"
	id_of g_$kind
done
$CC $nolibc -Wl,--build-id=0x0123456789abcdef -o "$out/g_hex8" "$tmp/exit64.c"
id_of g_hex8
$CC $nolibc -Wl,--build-id=0x000102030405060708090a0b0c0d0e0f10111213 \
	-o "$out/g_hex20" "$tmp/exit64.c"
id_of g_hex20
# ld writes these ids but the kernel must not report them:
# 21 and 32 bytes are longer than the 20 the record has room for, and ld
# stores a 1-byte id as an unpadded 17-byte note whose padded end lies past
# p_filesz (readelf rejects it too; c_size_1 is the padded 1-byte case).
$CC $nolibc -Wl,--build-id=0x000102030405060708090a0b0c0d0e0f1011121314 \
	-o "$out/g_hex21" "$tmp/exit64.c"
$CC $nolibc -Wl,--build-id=0x$(printf '%064x' 7) -o "$out/g_hex32" "$tmp/exit64.c"
$CC $nolibc -Wl,--build-id=0x5a -o "$out/g_hex1_unpadded" "$tmp/exit64.c"
$CC $nolibc -Wl,--build-id=none -o "$out/g_none" "$tmp/exit64.c"

# With glibc: a static ET_EXEC and a dynamic PIE (ET_DYN), both with
# several notes and PT_NOTE segments, as distributions ship them.
$CC -O2 -static -Wl,--build-id=sha1 -o "$out/g_static" "$tmp/main.c"
id_of g_static
$CC -O2 -fPIE -pie -Wl,--build-id=sha1 -o "$out/g_pie" "$tmp/main.c"
id_of g_pie

# ELF32 without a 32-bit libc (gcc-multilib conflicts with the arm64
# cross compiler): freestanding object, linked by ld directly.
$CC -m32 -ffreestanding -fno-pic -fno-stack-protector -O2 -c \
	-o "$tmp/exit32.o" "$tmp/exit32.c"
$LD -m elf_i386 --build-id=sha1 -o "$out/g_elf32" "$tmp/exit32.o"
id_of g_elf32
$LD -m elf_i386 -pie --no-dynamic-linker --build-id=md5 -o "$out/g_elf32_pie" "$tmp/exit32.o"
id_of g_elf32_pie

# ET_REL straight from the compiler, with a build-ID note from ld -r.
$CC -O2 -c -o "$tmp/exit64.o" "$tmp/exit64.c"
$LD -r --build-id=sha1 -o "$out/g_rel" "$tmp/exit64.o"

"$gen" "$out"
for f in "$out"/c_*.id; do
	name=$(basename "$f" .id)
	want=$(cat "$f")
	"$READELF" -n "$out/$name" 2>/dev/null | grep -q "Build ID: $want\$" || {
		echo "mkfixtures: readelf disagrees with gen_fixtures on $name ($want)" >&2
		exit 1
	}
done
rm -rf "$tmp"
