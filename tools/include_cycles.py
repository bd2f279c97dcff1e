#!/usr/bin/env python3
"""include_cycles - fails when modules include each other in a circle.

A module is a .c file with its .h (gateway/rpc/proxy.c + proxy.h). Module A depends on B
when A's .c or .h includes B's header. Every strongly connected set of more than one
module is a circle, printed with the include lines that close it.

    tools/include_cycles.py common gateway billing
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(roots):
    """Maps a module's name (path without extension) to its files."""
    mods = {}
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith((".c", ".h")):
                    p = os.path.join(d, f)
                    mods.setdefault(os.path.splitext(p)[0], []).append(p)
    return mods


def resolve(inc, src, search, headers):
    for base in [os.path.dirname(src)] + search:
        p = os.path.normpath(os.path.join(base, inc))
        if p in headers:
            return p
    return None


def graph(roots):
    mods = modules(roots)
    headers = {p for files in mods.values() for p in files if p.endswith(".h")}
    edges = {m: {} for m in mods}
    for m, files in mods.items():
        for f in files:
            with open(f, encoding="utf-8", errors="replace") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    h = resolve(inc, f, roots, headers)
                    if h and os.path.splitext(h)[0] != m:
                        edges[m].setdefault(os.path.splitext(h)[0], f)
    return edges


def circles(edges):
    """Tarjan's strongly connected components, those of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main(argv):
    roots = argv[1:] or ["common", "gateway", "billing"]
    edges = graph(roots)
    found = circles(edges)
    for comp in found:
        print("include circle: " + " <-> ".join(comp))
        for a in comp:
            for b in comp:
                if b in edges[a]:
                    print(f"  {edges[a][b]} includes {b}.h")
    if found:
        return 1
    print(f"no include circles among {len(edges)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
