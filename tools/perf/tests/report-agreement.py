#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Compares two `report --stdio` texts, perf's and perf-buildid's, entry by entry: the children
# and self percentages of every entry, and the branches of its call graph (graph, fractal, flat
# or folded), each a path of frames with its printed percentage. Both print "%.2f%%" of the
# same periods, so a difference above one unit of the last digit is a disagreement.
#
#   report-agreement.py PERF.txt OURS.txt [--tolerance 0.01]
#
# Prints one line per disagreement (at most 20 of each kind), then a summary line:
#   "agreement: N entries, M branches compared; largest difference D; K disagreements"
# and exits 1 when there is a disagreement or nothing was compared.
import os
import re
import sys

ENTRY = re.compile(r"^\s+([0-9.]+)%\s+(?:([0-9.]+)%\s+)?(\d+)\s+(.*\S)\s*$")
PCT_BRANCH = re.compile(r"--([0-9.]+)%--")
FOLDED = re.compile(r"^([0-9.]+)% (.*)$")
FLAT_PCT = re.compile(r"^ {11}([0-9.]+)%$")


def cells(text):
    return tuple(c for c in re.split(r"\s{2,}", text.strip()) if c)


def parse(path):
    """{event: {cells: (children, self, branches)}}; branches: {path tuple: percent or None}"""
    events = {}
    entries = None
    cur = None
    stack = []  # (name column, path list, percent) of the open branches
    flat_pct = None
    flat_path = []

    def close_all():
        nonlocal stack
        while stack:
            col, p, pct = stack.pop()
            cur[2][tuple(p)] = pct

    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("# Samples:"):
                if cur is not None:
                    close_all()
                cur = None
                m = re.search(r"of event '([^']*)'", line)
                name = m.group(1).split(":")[0] if m else "?"
                entries = events.setdefault(name, {})
                continue
            if line.startswith("#") or entries is None:
                continue
            m = ENTRY.match(line)
            if m and not line.startswith("            "):
                if cur is not None:
                    close_all()
                    if flat_path:
                        cur[2][tuple(flat_path)] = flat_pct
                        flat_path = []
                a, b = float(m.group(1)), m.group(2)
                children, self_ = (a, float(b)) if b is not None else (None, a)
                cur = [children, self_, {}]
                entries[cells(m.group(4))] = cur
                flat_pct = None
                continue
            if cur is None or not line.strip():
                if cur is not None and flat_path:
                    cur[2][tuple(flat_path)] = flat_pct
                    flat_path = []
                continue
            body = line[12:] if line.startswith("            ") else line
            fm = FOLDED.match(line)
            if fm and not line.startswith(" "):
                cur[2][tuple(fm.group(2).split(";"))] = float(fm.group(1))
                continue
            pm = FLAT_PCT.match(line)
            if pm:
                if flat_path:
                    cur[2][tuple(flat_path)] = flat_pct
                flat_pct, flat_path = float(pm.group(1)), []
                continue
            if line.startswith("                ") and flat_pct is not None and "|" not in line \
                    and "--" not in line:
                flat_path.append(line.strip())
                continue
            stripped = body.rstrip()
            if stripped.replace("|", "").strip() == "":
                continue  # a separator
            pb = PCT_BRANCH.search(body)
            if pb:
                col = pb.end()
                name = body[col:].strip()
                while stack and stack[-1][0] >= col:
                    c, p, pct = stack.pop()
                    cur[2][tuple(p)] = pct
                parent = stack[-1][1] if stack else []
                stack.append((col, parent + [name], float(pb.group(1))))
                continue
            if body.lstrip().startswith("---"):
                col = body.index("---") + 3
                close_all()
                stack.append((col, [body[col:].strip()], None))
                continue
            # A frame that continues the branch above it, at the same column.
            text = body.rstrip()
            col = len(text) - len(text.lstrip(" |"))
            name = text.strip(" |")
            while stack and stack[-1][0] > col:
                c, p, pct = stack.pop()
                cur[2][tuple(p)] = pct
            if stack:
                stack[-1][1].append(name)
        if cur is not None:
            close_all()
            if flat_path:
                cur[2][tuple(flat_path)] = flat_pct
    return events


def main():
    args = sys.argv[1:]
    tol = 0.01
    if "--tolerance" in args:
        i = args.index("--tolerance")
        tol = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__ or "usage: report-agreement.py PERF.txt OURS.txt", file=sys.stderr)
        return 2
    theirs, ours = parse(args[0]), parse(args[1])
    problems = []
    entries = branches = 0
    worst = 0.0

    def diff(a, b):
        if a is None or b is None:
            return 0.0 if a is None and b is None else float("inf")
        return abs(a - b)

    for ev, t_entries in theirs.items():
        o_entries = ours.get(ev)
        if o_entries is None:
            problems.append(f"event {ev}: not in our report")
            continue
        for key, (tc, ts, tb) in t_entries.items():
            if key not in o_entries:
                problems.append(f"entry {' | '.join(key)}: only in perf's report ({tc}%, {ts}%)")
                continue
            oc, os_, ob = o_entries[key]
            entries += 1
            for what, a, b in (("children", tc, oc), ("self", ts, os_)):
                d = diff(a, b)
                if d != float("inf"):
                    worst = max(worst, d)
                if d > tol + 1e-9:
                    problems.append(f"entry {' | '.join(key)}: {what} {a}% in perf's, {b}% in ours")
            for path, pct in tb.items():
                branches += 1
                if path not in ob:
                    problems.append(f"entry {' | '.join(key)}: branch {';'.join(path)} ({pct}%) "
                                    f"only in perf's")
                    continue
                d = diff(pct, ob[path])
                if d != float("inf"):
                    worst = max(worst, d)
                if d > tol + 1e-9:
                    problems.append(f"entry {' | '.join(key)}: branch {';'.join(path)}: {pct}% "
                                    f"in perf's, {ob[path]}% in ours")
            for path, pct in ob.items():
                if path not in tb:
                    problems.append(f"entry {' | '.join(key)}: branch {';'.join(path)} ({pct}%) "
                                    f"only in ours")
        for key in o_entries:
            if key not in t_entries:
                problems.append(f"entry {' | '.join(key)}: only in our report")
    for p in problems[:int(os.environ.get("AGREEMENT_SHOW", "40"))]:
        print(p)
    print(f"agreement: {entries} entries, {branches} branches compared; largest difference "
          f"{worst:.2f}; {len(problems)} disagreements")
    return 1 if problems or entries == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
