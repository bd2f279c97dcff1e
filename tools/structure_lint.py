#!/usr/bin/env python3
"""structure_lint - fails when the code's structure breaks the rules of tools/layers.txt.

A module is a .c file with its .h (gateway/serve/proxy.c + proxy.h). Module A depends on B
when A's .c or .h includes B's header (an include tie) or when A's object file uses a
function or variable that B's object file defines (a call tie, read with nm). It fails on:

  - an include that more than one of the search folders answers (common/, gateway/ and
    billing/ are all on the compiler's include path: "core/x.h" must name one file);
  - a circle of include ties, or of call ties, between modules (Tarjan's strongly
    connected components of more than one module);
  - a tie from a file of a block's room to a room listed above it in tools/layers.txt, to
    another block, or from common/ to anything above it;
  - a module of a block's folder (gateway/, billing/) that is in none of its rooms.

    tools/structure_lint.py [--objects DIR] [ROOT...]

ROOTs default to common gateway billing; DIR (default build/release) holds the object
files, under the same paths as the sources (build/release/gateway/serve/proxy.o). Without
them the call ties cannot be read: it fails and says to build first.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LAYERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.txt")


def modules(roots):
    """Maps a module's name (path without extension) to its files."""
    mods = {}
    for root in roots:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    p = os.path.join(d, f)
                    mods.setdefault(os.path.splitext(p)[0], []).append(p)
    return mods


def resolutions(inc, src, roots, headers):
    """Every header the include names: the including file's folder first, as the compiler
    looks, then each -I root."""
    found = []
    for base in [os.path.dirname(src)] + roots:
        p = os.path.normpath(os.path.join(base, inc))
        if p in headers and p not in found:
            found.append(p)
    return found


def include_ties(mods, roots, problems):
    headers = {p for files in mods.values() for p in files if p.endswith(".h")}
    ties = {m: {} for m in mods}
    for m, files in mods.items():
        for f in files:
            with open(f, encoding="utf-8", errors="replace") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    found = resolutions(inc, f, roots, headers)
                    if len(found) > 1:
                        problems.append(f'{f}: "{inc}" names {" and ".join(found)}: name one')
                    if found and os.path.splitext(found[0])[0] != m:
                        ties[m].setdefault(os.path.splitext(found[0])[0], f"{f} includes {found[0]}")
    return ties


def nm_symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True, check=True)
    defined = {ln.split()[-1] for ln in out.stdout.splitlines() if len(ln.split()) == 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True)
    used = {ln.split()[-1] for ln in out.stdout.splitlines() if ln.strip()}
    return defined, used


def call_ties(mods, objdir, problems):
    ties = {m: {} for m in mods}
    defined_in, uses = {}, {}
    for m in mods:
        if not os.path.exists(m + ".c"):
            continue
        obj = os.path.join(objdir, m + ".o")
        if not os.path.exists(obj):
            problems.append(f"{obj} is missing: build first (make all) so that call ties can be read")
            return ties
        defined, used = nm_symbols(obj)
        for s in defined:
            defined_in[s] = m
        uses[m] = used
    for m, used in uses.items():
        for s in sorted(used):
            d = defined_in.get(s)
            if d and d != m:
                ties[m].setdefault(d, f"{m}.c uses {s} of {d}.c")
    return ties


def circles(ties):
    """Tarjan's strongly connected components, those of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in ties[v]:
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
    for v in sorted(ties):
        if v not in index:
            visit(v)
    return out


def read_layers(path):
    """[(block, [room, ...]), ...], rooms top first."""
    blocks = []
    with open(path, encoding="utf-8") as fh:
        for ln in fh:
            ln = ln.split("#", 1)[0].strip()
            if not ln:
                continue
            if ln.startswith("[") and ln.endswith("]"):
                blocks.append((ln[1:-1], []))
            elif blocks:
                blocks[-1][1].append(os.path.normpath(ln))
    return blocks


def place(module, blocks):
    """(block, rank) of the room a module is in: rank 0 is the top room; common/ is
    ("common", None); a module in no listed room is (None, None)."""
    if module.startswith("common" + os.sep):
        return ("common", None)
    for name, rooms in blocks:
        for rank, room in enumerate(rooms):
            if module == os.path.splitext(room)[0] or module.startswith(room + os.sep):
                return (name, rank)
    return (None, None)


def upward(ties, blocks, kind, problems):
    for m in sorted(ties):
        mb, mr = place(m, blocks)
        for d, why in sorted(ties[m].items()):
            db, dr = place(d, blocks)
            if db == "common":
                continue
            if mb == "common":
                problems.append(f"common/ stands under every daemon: {why} ({kind})")
            elif mb is not None and db is None and d.startswith(mb + os.sep):
                continue  # a module of the block in no room: unplaced() says so once
            elif mb is not None and db != mb:
                problems.append(f"[{mb}] reaches into [{db or d.split(os.sep)[0]}]: {why} ({kind})")
            elif mb is not None and dr is None:
                problems.append(f"{d} is in no room of [{mb}] in tools/layers.txt: {why} ({kind})")
            elif mb is not None and dr < mr:
                rooms = dict(blocks)[mb]
                problems.append(
                    f"upward tie in [{mb}], {rooms[mr]} -> {rooms[dr]} (listed above it): {why} ({kind})"
                )


def unplaced(mods, blocks, problems):
    """Every module under a block's folder stands in one of its rooms."""
    for name, _ in blocks:
        for m in sorted(mods):
            if m.startswith(name + os.sep) and place(m, blocks)[0] != name:
                problems.append(f"{m} is under {name}/ but in no room of [{name}] in tools/layers.txt")


def main(argv):
    args = argv[1:]
    objdir = "build/release"
    if args[:1] == ["--objects"]:
        objdir, args = args[1], args[2:]
    roots = args or ["common", "gateway", "billing"]
    mods = modules(roots)
    blocks = read_layers(LAYERS)
    problems = []
    for name, rooms in blocks:
        for room in rooms:
            if not os.path.exists(room):
                problems.append(f"tools/layers.txt [{name}]: {room} does not exist")
    unplaced(mods, blocks, problems)
    inc = include_ties(mods, roots, problems)
    calls = call_ties(mods, objdir, problems)
    for kind, ties in (("include", inc), ("call", calls)):
        for comp in circles(ties):
            problems.append(f"{kind} circle: " + " <-> ".join(comp))
            for a in comp:
                for b in comp:
                    if b in ties[a]:
                        problems.append(f"  {ties[a][b]}")
        upward(ties, blocks, kind, problems)
    for p in problems:
        print(p)
    if problems:
        return 1
    placed = sum(1 for m in mods if place(m, blocks)[0] not in (None, "common"))
    print(
        f"{len(mods)} modules: no ambiguous include, no include or call circle; "
        f"{placed} in the rooms of {', '.join(b for b, _ in blocks)} tie only downward"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
