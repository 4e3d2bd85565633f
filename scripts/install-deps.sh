#!/usr/bin/env bash
# Installs what `make run` / `make check` need on a fresh Debian 12 machine.
# Bullseye (Debian 11) is added only as a source of linux-source-5.10: it is pinned below
# every bookworm package so that nothing on the system is ever upgraded from it. Its URIs and
# keyring are derived from the machine's own Debian sources (scripts/debian-sources.sh).
set -euo pipefail

stamp_dir=${XDG_CACHE_HOME:-$HOME/.cache}/buildid-mmap
mkdir -p "$stamp_dir"
# One at a time: make check runs make targets in two lanes, and each depends on this script;
# two apt-get runs at once fail on apt's lock.
exec 9>"$stamp_dir/install-deps.lock"
flock 9

PKGS=(
	# kernel builds and the lab
	build-essential bc bison flex libssl-dev libelf-dev dwarves ccache cpio xz-utils
	kmod git rsync qemu-system-x86 busybox-static gcc-aarch64-linux-gnu sparse e2fsprogs file
	# the selftests cross-built for arm64 (static programs need the arm64 libc)
	libc6-dev-arm64-cross linux-libc-dev-arm64-cross
	# the arm64 guest (its busybox-static:arm64, Debian 11's kernel config and headers are
	# fetched by kernel/scripts/debs.sh with apt-get download, never installed)
	qemu-system-arm
	# the i386, armhf and s390x guests (make check-arches): compilers, static libcs, QEMU
	gcc-i686-linux-gnu libc6-dev-i386-cross linux-libc-dev-i386-cross
	gcc-arm-linux-gnueabihf libc6-dev-armhf-cross linux-libc-dev-armhf-cross
	gcc-s390x-linux-gnu libc6-dev-s390x-cross linux-libc-dev-s390x-cross qemu-system-misc
	# checkpatch.pl runs scripts/spdxcheck.py on new files
	python3-ply python3-git
	linux-source-5.10 linux-source-6.12
	# gcc-multilib conflicts with the arm64 cross compiler; the ELF32 fixtures are
	# freestanding (gcc -m32 -c, ld -m elf_i386) and need no 32-bit libc.
	# perf-buildid
	cmake pkg-config libdw-dev libdebuginfod-dev debuginfod libgtest-dev
	protobuf-compiler libprotobuf-dev zlib1g-dev
	# perf-buildid: the compressed records of perf record -z (zstd)
	libzstd-dev
	linux-perf golang-go elfutils binutils
	# perf-buildid: SHA-256 for the file hash of mappings without a build ID (nettle)
	nettle-dev
	# perf-buildid: archive -o FILE.tar[.zst] (libarchive)
	libarchive-dev
	# make deb (debhelper, lintian, man pages) and the Debian 11 build root
	debhelper lintian man-db mmdebstrap
	# perf-buildid fuzzing: libFuzzer and the sanitizer runtimes
	clang-14 libclang-rt-14-dev
	# make bench: timing and the plot
	time gnuplot-nox
	# perf-buildid's BPF path: libbpf, the BPF compiler and the skeleton generator
	libbpf-dev bpftool clang
	# perf-5.10: Debian 11's perf, with the libraries Debian's linux-perf links
	libunwind-dev libslang2-dev libnuma-dev libaudit-dev libbabeltrace-dev libzstd-dev
	liblzma-dev libcap-dev libiberty-dev libperl-dev python3-dev python3-setuptools
	# the flame graph's browser test: headless Chromium driven through WebDriver, a font for
	# its screenshots (a Recommends of chromium, which this script does not install), xmllint
	chromium chromium-driver python3-selenium fonts-liberation libxml2-utils
	# hotspot's reader (perfparser) on perf-buildid's files
	hotspot
)

need=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done

src=/etc/apt/sources.list.d/buildid-mmap-bullseye.sources
pin=/etc/apt/preferences.d/buildid-mmap-bullseye

# install_file PATH: installs stdin as PATH unless PATH already has that content; returns 0
# when it wrote.
install_file() {
	local new
	new=$(mktemp)
	cat >"$new"
	if cmp -s "$new" "$1"; then
		rm -f "$new"
		return 1
	fi
	chmod 644 "$new"
	mv "$new" "$1"
	echo "install-deps: wrote $1" >&2
}

# Debian 11's sources come from this machine's own Debian sources (its mirror, its keyring),
# so they are rewritten whenever those change; root only, as apt's configuration is.
changed=0
if [ "$(id -u)" -eq 0 ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	. "$here/debian-sources.sh"
	host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if ! bullseye=$(debian_sources /etc/apt "$host" bullseye); then
		# Only fatal when something must be installed: a machine that already has every
		# package keeps working whatever its apt configuration became.
		[ ${#need[@]} -eq 0 ] && exit 0
		echo "install-deps: cannot add Debian 11 (for linux-source-5.10)" >&2
		exit 1
	fi
	# Debian 11 serves linux-source (all) and the amd64 kernel's config and headers: the
	# lab's other architectures' package lists (added below) are not fetched from it.
	{
		echo "# Written by buildid-mmap's scripts/install-deps.sh from this machine's Debian"
		echo "# sources; pinned by $pin."
		printf '%s\n' "$bullseye" |
			sed -e '/^Architectures:/d' -e "/^Suites:/a Architectures: $(dpkg --print-architecture)"
	} | install_file "$src" && changed=1
	install_file "$pin" <<'PIN' && changed=1
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

Package: linux-source-5.10
Pin: release n=bullseye
Pin-Priority: 500
PIN
	# apt-get download busybox-static:DEBARCH (the guests of the lab's other architectures,
	# LAB_ARCHES in kernel/scripts/common.sh) needs their package lists.
	mapfile -t debarches < <(bash -c '. "$1/kernel/scripts/common.sh" &&
		while read -r a; do lab_field LAB_ARCHES "$a" debarch; done < <(lab_keys LAB_ARCHES)' _ \
		"$here/..")
	[ ${#debarches[@]} -gt 0 ] || { echo "install-deps: no architectures in LAB_ARCHES" >&2; exit 1; }
	native=$(dpkg --print-architecture)
	# Read once, not piped into grep -q: under pipefail, grep leaving at the first match could
	# fail the pipe with dpkg's SIGPIPE, and a present architecture was then added again, with
	# an apt-get update (30 s, and apt's lock) on a run that had nothing to do.
	foreign=$(dpkg --print-foreign-architectures)
	for a in "${debarches[@]}"; do
		[ "$a" != "$native" ] || continue
		if ! grep -qx "$a" <<<"$foreign"; then
			dpkg --add-architecture "$a"
			changed=1
		fi
	done
fi

if [ ${#need[@]} -eq 0 ]; then
	[ "$changed" = 0 ] || apt-get update -qq
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${need[*]}; run as root" >&2
	exit 1
fi

echo "install-deps: apt-get install ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ ${#need[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
