# SPDX-License-Identifier: GPL-2.0
#
# The fold step of `perf script -F comm,ip,sym | awk -f fold-perf-script.awk`: one line per
# distinct stack, "comm;outermost;...;leaf COUNT", as stackcollapse-perf.pl folds them. It is
# perf's side of the bench row for `perf-buildid report --format folded`, which writes the same.
/^[^ \t]/ { comm = $0; sub(/[ \t]+$/, "", comm); n = 0; next }
/^[ \t]+[0-9a-f]+ / {
	sym = $2
	for (i = 3; i <= NF; i++)
		sym = sym " " $i
	frame[n++] = sym
	next
}
/^[ \t]*$/ {
	if (n > 0) {
		s = comm
		for (i = n - 1; i >= 0; i--)
			s = s ";" frame[i]
		count[s]++
	}
	n = 0
}
END { for (s in count) print s, count[s] }
