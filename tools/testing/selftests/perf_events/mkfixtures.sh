#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Builds the ELF fixtures for the build-ID mmap2 selftests into OUTDIR.
# Usage: mkfixtures.sh OUTDIR GEN_FIXTURES   (CC, LD, READELF from the environment)
#
# g_* files come from the real toolchain (CC, the target's compiler), with
# the ids it chooses; their NAME.id sidecar is readelf's answer.  c_*, l_*
# and m_* files come from gen_fixtures (crafted layouts, the series' limits,
# malformed files), written in the byte order of the target; its c_* and l_*
# sidecars are checked against readelf here, so a generator bug cannot hide
# behind its own sidecar.  A sidecar exists exactly for the files that carry
# an id.  A fixture that cannot be made for the target gets NAME.skip, one
# line with the reason, which its test reports as a skip.
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

# A static program that exits at once, for any architecture: runnable in
# the busybox guest (the inherit test execs it), its own _start and only
# libc's _exit, so it stays a few KiB.
# Where glibc still runs init and fini sections (armhf), its static
# _exit pulls in the start code, which calls them: empty ones, as
# -nostartfiles leaves out crti.o's.  i386's _exit enters the kernel
# through the TLS that the start code sets up: there, int $0x80.
cat >"$tmp/exit.c" <<'EOF'
#include <unistd.h>
#include <asm/unistd.h>
void _init(void) {}
void _fini(void) {}
void _start(void)
{
#ifdef __i386__
	__asm__ volatile("int $0x80" : : "a"(__NR_exit), "b"(0));
#endif
	_exit(0);
}
EOF
# Never run, only mapped: no libc, no system call.
cat >"$tmp/spin.c" <<'EOF'
void _start(void)
{
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

target=$($CC -dumpmachine)
nolibc="-nostartfiles -static -fno-pic -no-pie -fno-stack-protector -O2"
for kind in sha1 md5 uuid; do
	$CC $nolibc -Wl,--build-id=$kind -o "$out/g_$kind" "$tmp/exit.c"
	id_of g_$kind
done
$CC $nolibc -Wl,--build-id=0x0123456789abcdef -o "$out/g_hex8" "$tmp/exit.c"
id_of g_hex8
$CC $nolibc -Wl,--build-id=0x000102030405060708090a0b0c0d0e0f10111213 \
	-o "$out/g_hex20" "$tmp/exit.c"
id_of g_hex20
# ld writes these ids but the kernel must not report them:
# 21 and 32 bytes are longer than the 20 the record has room for, and ld
# stores a 1-byte id as an unpadded 17-byte note whose padded end lies past
# p_filesz (readelf rejects it too; c_size_1 is the padded 1-byte case).
$CC $nolibc -Wl,--build-id=0x000102030405060708090a0b0c0d0e0f1011121314 \
	-o "$out/g_hex21" "$tmp/exit.c"
$CC $nolibc -Wl,--build-id=0x$(printf '%064x' 7) -o "$out/g_hex32" "$tmp/exit.c"
$CC $nolibc -Wl,--build-id=0x5a -o "$out/g_hex1_unpadded" "$tmp/exit.c"
$CC $nolibc -Wl,--build-id=none -o "$out/g_none" "$tmp/exit.c"

# With glibc: a static ET_EXEC and a dynamic PIE (ET_DYN), both with
# several notes and PT_NOTE segments, as distributions ship them.
$CC -O2 -static -Wl,--build-id=sha1 -o "$out/g_static" "$tmp/main.c"
id_of g_static
$CC -O2 -fPIE -pie -Wl,--build-id=sha1 -o "$out/g_pie" "$tmp/main.c"
id_of g_pie

# ELF32 from the toolchain where it has a 32-bit mode without a 32-bit
# libc (gcc-multilib conflicts with the arm64 cross compiler): a
# freestanding object, linked by ld directly.  32-bit targets build it in
# their own mode, s390x in its 31-bit one.  Elsewhere (aarch64) the crafted
# c_elf32_* files are the ELF32 cases.
elf32=yes
case $target in
x86_64-* | i?86-*) cflags32=-m32 ld32="-m elf_i386" ;;
arm*-*) cflags32= ld32= ;;
s390x-*) cflags32=-m31 ld32="-m elf_s390" ;;
*) elf32=no ;;
esac
if [ $elf32 = yes ]; then
	# shellcheck disable=SC2086 # the flags are words, or none
	$CC $cflags32 -ffreestanding -fno-pic -fno-stack-protector -O2 -c \
		-o "$tmp/spin32.o" "$tmp/spin.c"
	# shellcheck disable=SC2086
	$LD $ld32 --build-id=sha1 -o "$out/g_elf32" "$tmp/spin32.o"
	id_of g_elf32
	# shellcheck disable=SC2086
	$LD $ld32 -pie --no-dynamic-linker --build-id=md5 -o "$out/g_elf32_pie" \
		"$tmp/spin32.o"
	id_of g_elf32_pie
else
	for f in g_elf32 g_elf32_pie; do
		echo "no 32-bit ELF from the $target toolchain without a 32-bit libc" >"$out/$f.skip"
	done
fi

# ET_REL straight from the compiler, with a build-ID note from ld -r.
$CC -O2 -c -o "$tmp/spin.o" "$tmp/spin.c"
$LD -r --build-id=sha1 -o "$out/g_rel" "$tmp/spin.o"

# gen_fixtures takes the byte order and machine from an object of the target.
"$gen" "$out" "$tmp/spin.o"
for f in "$out"/c_*.id "$out"/l_*.id; do
	name=$(basename "$f" .id)
	want=$(cat "$f")
	case $name in
	l_filesz_4g)
		# readelf will not read a 4 GiB note segment from a small file
		# either: check the segment size, and that the id bytes are there.
		"$READELF" -lW "$out/$name" | grep -q 'NOTE .* 0x1000000[0-9a-f][0-9a-f] ' &&
			od -An -v -tx1 "$out/$name" | tr -d ' \n' | grep -q "$want" && continue
		;;
	*)
		"$READELF" -n "$out/$name" 2>/dev/null | grep -q "Build ID: $want\$" && continue
		;;
	esac
	echo "mkfixtures: readelf disagrees with gen_fixtures on $name ($want)" >&2
	exit 1
done
# The files in the other byte order are valid there: readelf, which reads
# either order, finds their id, so their fallback is the byte order's doing.
for f in "$out"/m_foreign_endian*; do
	[ -n "$(readelf_id "$f")" ] && continue
	echo "mkfixtures: readelf finds no build ID in $(basename "$f")" >&2
	exit 1
done
rm -rf "$tmp"
