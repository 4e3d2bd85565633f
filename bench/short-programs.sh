# SPDX-License-Identifier: GPL-2.0
#
# Sourced by bench/workload.sh and bench/archive.sh (POSIX sh): the short processes of the
# bench's loads.

# short_program K: runs the K-th (0 to 5) of six distinct short programs once.
short_program() {
	case $1 in
	0) ls /usr/bin >/dev/null ;;
	1) sed -n 1p /etc/os-release >/dev/null ;;
	2) awk 'BEGIN { s = 0; for (i = 0; i < 2000; i++) s += i }' </dev/null ;;
	3) sort -n </etc/services >/dev/null ;;
	4) cat /proc/self/maps >/dev/null ;;
	*) id -u >/dev/null ;;
	esac
}
