#!/usr/bin/env python3
"""Count a kernel's SASS instructions, whole and in its loops, from `cuobjdump -sass` text.

The chunked state pass's time follows its instruction count per compute warp and chunk (DESIGN.md, session 15),
so comparing two builds' loop bodies opcode by opcode says what a change removed before any timing. Run on the
device machine (this one has no cuobjdump):

    cuobjdump -sass -fun chunk_split_state_rs_kernel build/libgdn_internal.a > main.sass   # or a lab's .o
    python3 docs/research/sass_count.py main.sass [lab.sass] [--kernel SUBSTRING] [--top N]

For each function whose name contains SUBSTRING (default: every function in the file): its instruction count,
then each loop (a backward branch and its target) with its count and its most frequent opcodes; with a second
file, the same functions side by side (matched by name) and the difference per opcode in the loop with the
most HGMMA instructions (the chunk loop). Opcodes are counted without their modifiers (FFMA.FTZ -> FFMA);
predicated instructions count as issued.
"""
import re
import sys
from collections import Counter

FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
TARGET_HEX = re.compile(r"\b(?:BRA|BRX|JMP)\b[^;]*?\b0x([0-9a-f]+)")
TARGET_LABEL = re.compile(r"\b(?:BRA|JMP)\b[^;]*?`?\(?(\.L_x_\d+)\)?")


def opcode(text):
    t = text.strip()
    if t.startswith("@"):  # predicate guard
        t = t.split(None, 1)[1] if " " in t else ""
    op = t.split(None, 1)[0] if t else ""
    return op.split(".")[0]


def parse(path):
    """{function: [(address, opcode, text)]}, {function: {label: address}}"""
    funcs, labels, cur = {}, {}, None
    pending = []
    with open(path, errors="replace") as f:
        for line in f:
            m = FUNC.match(line)
            if m:
                cur = m.group(1)
                funcs[cur], labels[cur], pending = [], {}, []
                continue
            if cur is None:
                continue
            m = LABEL.match(line)
            if m:
                pending.append(m.group(1))
                continue
            m = INSN.match(line)
            if m:
                addr = int(m.group(1), 16)
                for lab in pending:
                    labels[cur][lab] = addr
                pending = []
                funcs[cur].append((addr, opcode(m.group(2)), m.group(2)))
    return funcs, labels


def loops(insns, labels):
    """[(start, end)] address ranges of backward branches, innermost last for equal starts"""
    out = []
    for addr, op, text in insns:
        if op not in ("BRA", "JMP"):
            continue
        tgt = None
        m = TARGET_HEX.search(text)
        if m:
            tgt = int(m.group(1), 16)
        else:
            m = TARGET_LABEL.search(text)
            if m and m.group(1) in labels:
                tgt = labels[m.group(1)]
        if tgt is not None and tgt <= addr:
            out.append((tgt, addr))
    return sorted(set(out))


def counts(insns, lo=None, hi=None):
    return Counter(op for a, op, _ in insns if (lo is None or lo <= a <= hi) and op != "NOP")


def chunk_loop(insns, labels):
    """the loop with the most HGMMA (ties: the shortest), or None"""
    best = None
    for lo, hi in loops(insns, labels):
        c = counts(insns, lo, hi)
        key = (c["HGMMA"], -(hi - lo))
        if c["HGMMA"] and (best is None or key > best[0]):
            best = (key, lo, hi, c)
    return best


def short(name, n=70):
    return name if len(name) <= n else name[: n - 3] + "..."


def main(argv):
    files, sub, top = [], "", 12
    i = 0
    while i < len(argv):
        if argv[i] == "--kernel":
            sub = argv[i + 1]
            i += 2
        elif argv[i] == "--top":
            top = int(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if not files or len(files) > 2:
        print(__doc__)
        return 2
    parsed = [parse(f) for f in files]
    names = [n for n in parsed[0][0] if sub in n]
    if not names:
        print("no function matching %r in %s" % (sub, files[0]))
        return 1
    for name in names:
        insns, labels = parsed[0][0][name], parsed[0][1][name]
        print("%s: %d instructions" % (short(name), len(insns)))
        for lo, hi in loops(insns, labels):
            c = counts(insns, lo, hi)
            print("  loop %05x-%05x: %5d  %s" % (lo, hi, sum(c.values()),
                                               " ".join("%s %d" % kv for kv in c.most_common(top))))
        if len(parsed) == 2:
            if name not in parsed[1][0]:
                print("  (not in %s)" % files[1])
                continue
            a, b = chunk_loop(insns, labels), chunk_loop(parsed[1][0][name], parsed[1][1][name])
            print("  %s: %d instructions" % (files[1], len(parsed[1][0][name])))
            if a and b:
                ca, cb = a[3], b[3]
                print("  chunk loop: %d -> %d instructions" % (sum(ca.values()), sum(cb.values())))
                diff = sorted(set(ca) | set(cb), key=lambda k: -abs(cb[k] - ca[k]))
                print("   " + " ".join("%s %+d" % (k, cb[k] - ca[k]) for k in diff if cb[k] != ca[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
