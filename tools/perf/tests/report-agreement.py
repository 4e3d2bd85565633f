#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Compares two `report --stdio` texts, perf's and perf-buildid's, entry by entry: the children
# and self percentages of every entry, and the branches of its call graph (graph, fractal, flat
# or folded), each a path of frames with its printed percentage. Both print "%.2f%%" of the
# same periods, so a difference above one unit of the last digit is a disagreement.
#
#   report-agreement.py PERF.txt OURS.txt [--tolerance 0.01] [--perf-split SPLIT.txt]
#
# Entries that only one side has, in the same module and with the same numbers, are one
# function named by two of its aliases (read, __read, __libc_read: the tools choose among the
# symbols of an address differently); they are listed as "named differently" and compared as
# one entry.
#
# Sorted by symbol alone, perf shows one function of one file as two entries now and then (with
# dso among the sort keys, or with -v, the same samples make one). Both halves shown, the two
# are compared by their sum. Under --comms a half is hidden when the sample that made it is
# of another command, and the half shown is not comparable. SPLIT.txt lists, one a line, the
# entries' cells that perf split in its report of the same file without --comms (the caller
# works them out): such an entry, shown once here, is not compared, nor the branches through
# it, and each is counted.
#
# What only one side shows (an address one tool names and the other not, like the vDSO) is
# listed; it is a disagreement when its share reaches AGREEMENT_ONE_SIDED_LIMIT percent (0.5).
#
# Prints one line per disagreement (at most 40), then a summary line:
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


def add_branch(entry, path, pct):
    """perf can show one function as two sibling branches (it keeps two copies of one file
    apart now and then): a path seen twice under an entry adds up."""
    key = tuple(path)
    branches = entry[2]
    if key in branches and branches[key] is not None and pct is not None:
        branches[key] = round(branches[key] + pct, 2)
    elif key not in branches:
        branches[key] = pct


def parse(path):
    """{event: {cells: (children, self, branches)}}; branches: {path tuple: percent or None}"""
    events = {}
    entries = None
    cur = None
    # The open branches: (marker column, name column, path list, percent). Siblings' markers
    # ("|--" or " --") share a column; their names do not when their percentages differ in
    # width ("|--7.69%--" and " --84.62%--").
    stack = []
    flat_pct = None
    flat_path = []

    def close_all():
        nonlocal stack
        while stack:
            _, _, p, pct = stack.pop()
            add_branch(cur, p, pct)

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
                        add_branch(cur, flat_path, flat_pct)
                        flat_path = []
                a, b = float(m.group(1)), m.group(2)
                children, self_ = (a, float(b)) if b is not None else (None, a)
                key = cells(m.group(4))
                if key in entries:
                    # perf printed another entry with the same cells (it keeps some apart by
                    # an internal key the table does not show): they are compared by their
                    # sum, and their call graphs, not summable in every mode, are not.
                    prev = entries[key]
                    prev[0] = None if children is None else round((prev[0] or 0) + children, 2)
                    prev[1] = round(prev[1] + self_, 2)
                    prev[3] = True
                    cur = [None, None, {}, True]  # its branches go nowhere
                    continue
                cur = [children, self_, {}, False]
                entries[key] = cur
                flat_pct = None
                continue
            if cur is None or not line.strip():
                if cur is not None and flat_path:
                    add_branch(cur, flat_path, flat_pct)
                    flat_path = []
                continue
            body = line[12:] if line.startswith("            ") else line
            fm = FOLDED.match(line)
            if fm and not line.startswith(" "):
                add_branch(cur, fm.group(2).split(";"), float(fm.group(1)))
                continue
            pm = FLAT_PCT.match(line)
            if pm:
                if flat_path:
                    add_branch(cur, flat_path, flat_pct)
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
                # perf 6.1 marks its "[...]" line (what fractal's threshold hid) as inlined.
                if name == "[...] (inlined)":
                    name = "[...]"
                marker = pb.start()
                while stack and stack[-1][0] >= marker:
                    _, _, p, pct = stack.pop()
                    add_branch(cur, p, pct)
                parent = stack[-1][2] if stack else []
                stack.append((marker, col, parent + [name], float(pb.group(1))))
                continue
            if body.lstrip().startswith("---"):
                col = body.index("---") + 3
                close_all()
                stack.append((col - 3, col, [body[col:].strip()], None))
                continue
            # A frame that continues the branch above it, at the same column.
            text = body.rstrip()
            col = len(text) - len(text.lstrip(" |"))
            name = text.strip(" |")
            while stack and stack[-1][1] > col:
                _, _, p, pct = stack.pop()
                add_branch(cur, p, pct)
            if stack:
                stack[-1][2].append(name)
        if cur is not None:
            close_all()
            if flat_path:
                add_branch(cur, flat_path, flat_pct)
    return events


def sym_of(key):
    last = key[-1]
    return last[4:] if last[:4] in ("[.] ", "[k] ") else None


def pair_aliases(theirs, ours):
    """Entries only one side has, with the same other cells and the same numbers, are one
    function that the two tools name by different aliases (an address with several symbols:
    read, __read, __libc_read). Returns {perf's name: our name}."""
    aliases = {}
    for ev, t_entries in theirs.items():
        o_entries = ours.get(ev, {})
        only_t = [k for k in t_entries if k not in o_entries]
        only_o = [k for k in o_entries if k not in t_entries]
        for tk in only_t:
            if sym_of(tk) is None:
                continue
            matches = [ok for ok in only_o
                       if ok[:-1] == tk[:-1] and ok[-1][:4] == tk[-1][:4]
                       and o_entries[ok][:2] == t_entries[tk][:2] and sym_of(ok) is not None]
            if not matches or sym_of(tk) in aliases:
                continue
            # Several with the same numbers: the name closest to perf's (the longest common
            # ending: munmap and __munmap), if one is closest.
            def common_end(a, b):
                n = 0
                while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
                    n += 1
                return n
            matches.sort(key=lambda ok: -common_end(sym_of(ok), sym_of(tk)))
            if len(matches) > 1 and common_end(sym_of(matches[0]), sym_of(tk)) == \
                    common_end(sym_of(matches[1]), sym_of(tk)):
                continue
            aliases[sym_of(tk)] = sym_of(matches[0])
            only_o.remove(matches[0])
        # What is left, one of each side with the same numbers, pairs too.
        for tk in [k for k in t_entries if k not in o_entries and sym_of(k) not in aliases]:
            if sym_of(tk) is None:
                continue
            rest = [ok for ok in o_entries if ok not in t_entries
                    and sym_of(ok) not in aliases.values() and ok[:-1] == tk[:-1]
                    and ok[-1][:4] == tk[-1][:4] and o_entries[ok][:2] == t_entries[tk][:2]]
            if len(rest) == 1:
                aliases[sym_of(tk)] = sym_of(rest[0])
    return aliases


def pair_branch_aliases(theirs, ours):
    """Branches only one side has, under the same entry, of the same length and percentage,
    that differ in one frame: that frame is one function named by two aliases."""
    aliases = {}
    for ev, t_entries in theirs.items():
        o_entries = ours.get(ev, {})
        for key, t in t_entries.items():
            if key not in o_entries:
                continue
            tb, ob = t[2], o_entries[key][2]
            only_o = [p for p in ob if p not in tb]
            for tp, pct in tb.items():
                if tp in ob:
                    continue
                # Every branch of ours that could be this one renamed: (perf's name, ours).
                cands = []
                for op in only_o:
                    if len(op) != len(tp) or ob[op] != pct:
                        continue
                    diff = [i for i in range(len(tp)) if tp[i] != op[i]]
                    if len(diff) == 1:
                        cands.append((tp[diff[0]], op[diff[0]]))
                # Two calls with equal shares under one caller (mmap64 and fstatat64, 5.71%
                # each) each match both of the other side's: only the name that is the same
                # function's (mmap64 and __mmap) pairs, and where that is not clear, none.
                if len(cands) > 1:
                    cands = [c for c in cands if alias_stem(c[0]) == alias_stem(c[1])]
                if len(cands) == 1 and cands[0][0] not in aliases:
                    aliases[cands[0][0]] = cands[0][1]
    return aliases


def alias_stem(name):
    """What glibc's aliases of one function share: __GI___fstatat64, fstatat64 and fstatat;
    __mmap and mmap64; __GI___read_nocancel and __read_nocancel."""
    stem = re.sub(r"^(?:_|GI_)+", "", name)
    return re.sub(r"64$", "", stem)


def rename(events, aliases):
    def frame(name):
        return aliases.get(name, name)

    out = {}
    for ev, entries in events.items():
        out[ev] = {}
        for key, (c, s, branches, merged) in entries.items():
            sym = sym_of(key)
            if sym is not None and sym in aliases:
                key = key[:-1] + (key[-1][:4] + aliases[sym],)
            out[ev][key] = (c, s, {tuple(frame(f) for f in p): v for p, v in branches.items()},
                            merged)
    return out


def main():
    args = sys.argv[1:]
    tol = 0.01
    if "--tolerance" in args:
        i = args.index("--tolerance")
        tol = float(args[i + 1])
        del args[i:i + 2]
    perf_split = set()
    if "--perf-split" in args:
        i = args.index("--perf-split")
        with open(args[i + 1], encoding="utf-8", errors="replace") as f:
            perf_split = {cells(line) for line in f if line.strip()}
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__ or "usage: report-agreement.py PERF.txt OURS.txt", file=sys.stderr)
        return 2
    theirs, ours = parse(args[0]), parse(args[1])
    aliases = pair_aliases(theirs, ours)
    for perf_name, our_name in sorted(aliases.items()):
        print(f"named differently: perf '{perf_name}', ours '{our_name}' (same module, same "
              f"numbers)")
    theirs = rename(theirs, aliases)
    more = pair_branch_aliases(theirs, ours)
    for perf_name, our_name in sorted(more.items()):
        print(f"named differently: perf '{perf_name}', ours '{our_name}' (same place in a "
              f"call graph, same numbers)")
    theirs = rename(theirs, more)
    problems = []
    one_sided = []  # (share in percent, text): what only one side shows
    entries = branches = merged = 0
    worst = 0.0

    def diff(a, b, share=None):
        # A branch without a percentage is the entry's only one: it holds all of the entry.
        if a is None and b is not None and share is not None:
            a = share
        if b is None and a is not None and share is not None:
            b = share
        if a is None or b is None:
            return 0.0 if a is None and b is None else float("inf")
        return abs(a - b)

    skipped = 0
    half_hidden = 0
    for ev, t_entries in theirs.items():
        o_entries = ours.get(ev)
        # Functions perf split into two entries (it keeps two copies of one file apart now
        # and then): their entries are compared by their sums, and the call-graph branches
        # that pass through them, shaped by the split, are not compared.
        split = {sym_of(k)[0:] for k, e in t_entries.items() if e[3] and sym_of(k)}
        # Those split in the report without --comms and shown once here: a half is hidden.
        hidden = {k for k, e in t_entries.items() if k in perf_split and not e[3]}
        split |= {sym_of(k) for k in hidden if sym_of(k)}
        def through_split(path):
            return any(f in split for f in path)
        if o_entries is None:
            problems.append(f"event {ev}: not in our report")
            continue
        for key, (tc, ts, tb, _) in t_entries.items():
            if key not in o_entries:
                one_sided.append((max(tc or 0, ts or 0),
                                  f"entry {' | '.join(key)}: only in perf's report ({tc}%, {ts}%)"))
                continue
            oc, os_, ob, _ = o_entries[key]
            if key in hidden:
                half_hidden += 1
                continue
            entries += 1
            if t_entries[key][3]:
                merged += 1
                tb = ob  # perf's split entry: its numbers are compared, its graph is not
            for what, a, b in (("children", tc, oc), ("self", ts, os_)):
                d = diff(a, b)
                if d != float("inf"):
                    worst = max(worst, d)
                if d > tol + 1e-9:
                    problems.append(f"entry {' | '.join(key)}: {what} {a}% in perf's, {b}% in ours")
            for path, pct in tb.items():
                if through_split(path):
                    skipped += 1
                    continue
                branches += 1
                if path not in ob:
                    one_sided.append((pct if pct is not None else max(tc or 0, ts or 0),
                                      f"entry {' | '.join(key)}: branch {';'.join(path)} ({pct}%) "
                                      f"only in perf's"))
                    continue
                d = diff(pct, ob[path], oc if oc is not None else os_)
                if d != float("inf"):
                    worst = max(worst, d)
                if d > tol + 1e-9:
                    problems.append(f"entry {' | '.join(key)}: branch {';'.join(path)}: {pct}% "
                                    f"in perf's, {ob[path]}% in ours")
            for path, pct in ob.items():
                if path not in tb and not through_split(path):
                    one_sided.append((pct if pct is not None else max(oc or 0, os_ or 0),
                                      f"entry {' | '.join(key)}: branch {';'.join(path)} ({pct}%) "
                                      f"only in ours"))
        for key, (oc, os_, _, _) in o_entries.items():
            if key not in t_entries:
                one_sided.append((max(oc or 0, os_ or 0),
                                  f"entry {' | '.join(key)}: only in our report ({oc}%, {os_}%)"))
    # What only one side shows: addresses one tool names and the other does not (the vDSO,
    # return addresses outside every mapping), each listed; a disagreement when it is above
    # the limit, so that it cannot hide a wrong number.
    limit = float(os.environ.get("AGREEMENT_ONE_SIDED_LIMIT", "0.5"))
    for share, text in one_sided:
        if share >= limit:
            problems.append(text + f" (at or above the {limit}% limit)")
        else:
            print("one side only: " + text)
    for p in problems[:int(os.environ.get("AGREEMENT_SHOW", "40"))]:
        print(p)
    print(f"agreement: {entries} entries, {branches} branches compared; largest difference "
          f"{worst:.2f}; {merged} split by perf ({skipped} branches through them not compared); "
          f"{half_hidden} split by perf with a half hidden by --comms, not compared; "
          f"{len(one_sided)} shown by one side only, each below {limit}%; "
          f"{len(problems)} disagreements")
    return 1 if problems or entries == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
