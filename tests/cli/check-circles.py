#!/usr/bin/env python3
"""check-circles.py ROOT OBJDIR: the circles between the files of a
source tree (tests/cli/arrows.sh; docs/architecture.md, "The picture of the
tree").

The files are the C, CUDA and header files of the parts (base, hw, kernels,
comm, bench, report). File A points at file B when header A includes
header B ("#include" naming it from ROOT), or when A's object (as the
build makes it: OBJDIR/x.o from ROOT/x.c, OBJDIR/x.cu.o from ROOT/x.cu)
uses a symbol that B's object defines (nm: a call, or a global variable
read). A .c file including a header is not an arrow by itself: what it
uses of the header's functions is (a header declaring what several .c
files define is no circle by itself). A circle is a set of two or more
files that reach each other along these arrows (a strongly connected
component); no arrow is left out.

Prints one line per circle: its files, then one arrow per line of a cycle
through them with why it exists; nothing when all is well. Exit status 0;
2 on bad usage.
"""
import os
import re
import subprocess
import sys

SRC = ('.c', '.h', '.cu')
PARTS = ('base', 'hw', 'kernels', 'comm', 'bench', 'report')


def files(root):
    out = []
    for part in PARTS:
        for d, _, names in os.walk(os.path.join(root, part)):
            for n in names:
                if n.endswith(SRC):
                    out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def module(path):
    return os.path.splitext(path)[0]


INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def include_arrows(root, srcs, arrows):
    have = set(srcs)
    for f in srcs:
        with open(os.path.join(root, f), errors='replace') as fh:
            text = fh.read()
        for inc in INC.findall(text):
            if inc in have and f.endswith('.h') and inc != f:
                arrows.setdefault((f, inc), 'includes it')


def symbol_arrows(root, objdir, srcs, arrows):
    objs = {}
    for f in srcs:
        if f.endswith(('.c', '.cu')):
            o = os.path.join(objdir, (module(f) if f.endswith('.c') else f) + '.o')
            if os.path.exists(o):
                objs[f] = o
    if not objs:
        return 0
    defined, used = {}, {}
    for m, o in objs.items():
        r = subprocess.run(['nm', '-P', o], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) < 2:
                continue
            name, kind = p[0], p[1]
            if kind == 'U':
                used.setdefault(m, set()).add(name)
            elif kind in 'TDBRVWG' and kind.isupper():
                defined.setdefault(name, m)
    for m, names in used.items():
        for name in sorted(names):
            d = defined.get(name)
            if d and d != m:
                arrows.setdefault((m, d), 'uses %s' % name)
    return len(objs)


def circles(arrows):
    succ = {}
    for (a, b) in arrows:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, onstack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(100000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(succ):
        if v not in index:
            strong(v)
    return comps, succ


def cycle(comp, succ):
    """One cycle through the component's first module (breadth first)."""
    inside = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(succ[v]):
            if w not in inside:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def main():
    if len(sys.argv) != 3:
        print(__doc__.split('\n')[0], file=sys.stderr)
        return 2
    root, objdir = sys.argv[1], sys.argv[2]
    srcs = files(root)
    arrows = {}
    include_arrows(root, srcs, arrows)
    symbol_arrows(root, objdir, srcs, arrows)
    comps, succ = circles(arrows)
    for comp in comps:
        cyc = cycle(comp, succ)
        print('circle of %d files: %s' % (len(comp), ' '.join(comp)))
        for a, b in zip(cyc, cyc[1:]):
            print('    %s -> %s (%s)' % (a, b, arrows[(a, b)]))
    return 0


sys.exit(main())
