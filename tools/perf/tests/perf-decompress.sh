#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-decompress.sh IN OUT: OUT is the perf.data file (or pipe-mode stream) IN with every
# record as Linux perf decompresses it from IN's PERF_RECORD_COMPRESSED records, written
# plainly: the uncompressed equivalent of a `perf record -z` recording, to compare a reader
# with. perf 6.1's `perf inject` cannot make it (it copies compressed records as they are);
# `perf report -D` prints every record it reads, with its bytes, and --disable-order keeps
# the file's order. The header, the events and the feature sections are kept (the sections
# moved after the new data section).
set -euo pipefail
PERF=${PERF:-/usr/bin/perf}
in=$1
out=$2
dump=$(mktemp)
trap 'rm -f "$dump"' EXIT
"$PERF" report -D --disable-order -i "$in" 2>/dev/null >"$dump"
python3 - "$in" "$out" "$dump" <<'EOF'
import re, struct, sys
src, dst, dump = sys.argv[1:]
b = open(src, 'rb').read()
events, cur, need = [], None, 0
size_re = re.compile(rb'^\. \.\.\. raw event: size (\d+) bytes')
hex_re = re.compile(rb'^\.  [0-9a-f]{4}:  ((?:[0-9a-f]{2} )+)')
for line in open(dump, 'rb'):
    m = size_re.match(line)
    if m:
        cur, need = bytearray(), int(m.group(1))
        continue
    m = hex_re.match(line) if cur is not None else None
    if m:
        cur += bytes.fromhex(m.group(1).decode())
        if len(cur) >= need:
            events.append(bytes(cur[:need]))
            cur = None
if cur is not None:
    sys.exit('perf-decompress.sh: the dump ends inside a record')
data = b''.join(events)
if struct.unpack_from('<Q', b, 8)[0] == 104:
    data_off, data_size = struct.unpack_from('<QQ', b, 40)
    head, tail = bytearray(b[:data_off]), bytearray(b[data_off + data_size:])
    struct.pack_into('<Q', head, 48, len(data))
    for i in range(sum(bin(w).count('1') for w in struct.unpack_from('<4Q', head, 72))):
        off = struct.unpack_from('<Q', tail, 16 * i)[0]
        struct.pack_into('<Q', tail, 16 * i, off + len(data) - data_size)
    b = bytes(head) + data + bytes(tail)
else:
    b = b[:16] + data
open(dst, 'wb').write(b)
EOF
