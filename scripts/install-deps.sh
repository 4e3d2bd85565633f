#!/usr/bin/env bash
# Installs what `make run` / `make check` need on a fresh Debian 12 machine.
# Bullseye (Debian 11) is added only as a source of linux-source-5.10: it is pinned below
# every bookworm package so that nothing on the system is ever upgraded from it.
set -euo pipefail

stamp_dir=${XDG_CACHE_HOME:-$HOME/.cache}/buildid-mmap
mkdir -p "$stamp_dir"

PKGS=(
	# kernel builds and the lab
	build-essential bc bison flex libssl-dev libelf-dev dwarves ccache cpio xz-utils
	kmod git rsync qemu-system-x86 busybox-static gcc-aarch64-linux-gnu sparse e2fsprogs file
	# the arm64 guest (its busybox-static:arm64, Debian 11's kernel config and headers are
	# fetched by kernel/scripts/debs.sh with apt-get download, never installed)
	qemu-system-arm
	# checkpatch.pl runs scripts/spdxcheck.py on new files
	python3-ply python3-git
	linux-source-5.10 linux-source-6.12
	# gcc-multilib conflicts with the arm64 cross compiler; the ELF32 fixtures are
	# freestanding (gcc -m32 -c, ld -m elf_i386) and need no 32-bit libc.
	# perf-buildid
	cmake pkg-config libdw-dev libdebuginfod-dev debuginfod libgtest-dev
	protobuf-compiler libprotobuf-dev zlib1g-dev
	linux-perf golang-go elfutils binutils
)

need=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
# apt-get download busybox-static:arm64 needs the arm64 package lists.
need_arm64=0
dpkg --print-foreign-architectures | grep -qx arm64 || need_arm64=1
if [ ${#need[@]} -eq 0 ] && [ "$need_arm64" = 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${need[*]}; run as root" >&2
	exit 1
fi

src=/etc/apt/sources.list.d/buildid-mmap-bullseye.sources
if [ ! -f "$src" ]; then
	cat >"$src" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bullseye-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	cat >/etc/apt/preferences.d/buildid-mmap-bullseye <<'PIN'
# Only linux-source-5.10 may come from Debian 11.
Package: *
Pin: release n=bullseye
Pin-Priority: -10

Package: *
Pin: release n=bullseye-security
Pin-Priority: -10

Package: linux-source-5.10
Pin: release n=bullseye-security
Pin-Priority: 500
PIN
fi

[ "$need_arm64" = 1 ] && dpkg --add-architecture arm64
echo "install-deps: apt-get install ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ ${#need[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
