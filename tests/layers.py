#!/usr/bin/env python3
"""The core's arrows between files, drawn from its calls and includes, and
the layering rules they must keep.

A file calls another when its object file needs a symbol the other defines
(nm); it includes another when it names the header in #include "...".  A
part is a folder of core/src (the headers in core/src itself belong to no
part).  The rules (issue 51):
  - no circle of files that spans two parts;
  - no arrow from net/ to the readers (input/, conf/, slurm/);
  - no arrow from input/, conf/ or slurm/ up into map/ or job/.
  python3 tests/layers.py [BUILD]      print the broken rules; exit 1 if any
  python3 tests/layers.py --graph      also print every arrow across parts
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "core", "src")
READERS = ("input", "conf", "slurm")
UPPER = ("map", "job")


def part(path):
    rel = os.path.relpath(path, SRC)
    return rel.split(os.sep)[0] if os.sep in rel else ""


def sources():
    out = []
    for d, _, files in os.walk(SRC):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.join(d, f))
    return sorted(out)


def include_arrows(files):
    arrows = set()
    names = {os.path.relpath(f, SRC): f for f in files}
    for f in files:
        for line in open(f, encoding="utf-8", errors="replace"):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            cand = [os.path.normpath(os.path.join(os.path.dirname(f), inc)),
                    os.path.join(SRC, inc)]
            for c in cand:
                if os.path.relpath(c, SRC) in names:
                    arrows.add((f, c, "includes"))
                    break
    return arrows


def call_arrows(build):
    objdir = os.path.join(ROOT, build, "core")
    defs, uses = {}, {}
    for d, _, files in os.walk(objdir):
        for o in files:
            if not o.endswith(".o"):
                continue
            obj = os.path.join(d, o)
            rel = os.path.relpath(obj, objdir)
            src = os.path.join(SRC, rel[:-2] + ".c")
            if not os.path.exists(src):
                continue
            nm = subprocess.run(["nm", obj], stdout=subprocess.PIPE, text=True).stdout
            for ln in nm.splitlines():
                p = ln.split()
                if len(p) == 3 and p[1] in "TDBR":
                    defs[p[2]] = src
                elif len(p) == 2 and p[0] == "U":
                    uses.setdefault(src, set()).add(p[1])
    arrows = set()
    for src, syms in uses.items():
        for s in syms:
            t = defs.get(s)
            if t and t != src:
                arrows.add((src, t, "calls " + s))
    return arrows


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in nodes:
        if v0 in index:
            continue
        work = [(v0, iter(sorted(edges.get(v0, ()))))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        onstack.add(v0)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    onstack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in onstack:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = args[0] if args else "build"
    if not os.path.isdir(os.path.join(ROOT, build, "core")):
        print("layers.py: %s/core not built (make)" % build, file=sys.stderr)
        return 2
    files = sources()
    arrows = include_arrows(files) | call_arrows(build)
    rel = lambda f: os.path.relpath(f, SRC)
    edges = {}
    why = {}
    for a, b, w in arrows:
        edges.setdefault(a, set()).add(b)
        why.setdefault((a, b), w)
    broken = []
    for a, b, w in sorted(arrows):
        pa, pb = part(a), part(b)
        if pa == pb or not pa or not pb:
            continue
        if pa == "net" and pb in READERS:
            broken.append("net/ -> reader: %s %s %s" % (rel(a), w, rel(b)))
        if pa in READERS and pb in UPPER:
            broken.append("reader -> %s/: %s %s %s" % (pb, rel(a), w, rel(b)))
    for comp in sccs(sorted(set(files)), edges):
        parts = sorted({part(f) for f in comp if part(f)})
        if len(comp) > 1 and len(parts) > 1:
            broken.append("circle across %s: %s" % (
                ", ".join(parts), " ".join(rel(f) for f in comp)))
    if "--graph" in sys.argv:
        for a, b, w in sorted(arrows):
            if part(a) != part(b) and part(a) and part(b):
                print("%s -> %s (%s)" % (rel(a), rel(b), w))
    for b in broken:
        print(b)
    print("layers: %d broken rule%s" % (len(broken), "" if len(broken) == 1 else "s"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
