#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""check-layers: the import picture of criu/, and the rules it must keep.

    scripts/check-layers.py [--build DIR] [--src DIR] [--dot] [--list]

Every module of criu/ (a .c file with the .h of the same name; a header of
its own) is a node. An arrow goes from a module to every module it includes
and, with --build (a meson build directory holding criu's objects), to
every module that defines a symbol its object uses: a function declared in
one header and defined elsewhere is seen where it is defined.

The rules (Documentation/design.md, section 2):
  - no circle: no module reaches itself again through its arrows;
  - arrows point down the layers, never up:
        core < image, proc < task < parts < tree < drivers < main
    (two modules of one layer may use each other, one way);
  - a part uses only the modules of its own group in parts/ (the name up to
    its first dash: mm.c and mm-pages.c, file-*.c), and part.h; only the
    table (parts.c) names the parts of every group.

Exits 1 after naming each broken rule with the arrow and (for symbols) the
symbol that makes it; --list prints every arrow, --dot a graph for dot(1).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

SRC = Path(__file__).resolve().parent.parent / "criu"

# Folders and top-level files, by layer; a module not listed is an error.
LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["core/"]),
    ("image, proc", ["image/", "proc/"]),
    ("task", ["task/"]),
    ("parts", ["parts/"]),
    ("tree", ["tree/"]),
    ("drivers", ["commands", "dump", "check", "cpuinfo", "hooks", "pagesrv", "lazy", "restore/",
                 "rpc/"]),
    # main: the programs (criu-tls, the TLS helper, links with none of the rest)
    ("main", ["main", "tls/"]),
]
# The table of parts: the one module of parts/ that names every group.
PART_TABLE = "parts/parts"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(mod: str) -> Optional[int]:
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (p.endswith("/") and mod.startswith(p)) or mod == p:
                return rank
    return None


def group_of(mod: str) -> str:
    """The group of a module of parts/: its name up to the first dash."""
    return mod.split("/", 1)[1].split("-", 1)[0]


def module_of(src: Path, path: Path) -> str:
    return str(path.relative_to(src).with_suffix(""))


def sources(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h", ".S"))


class Graph:
    def __init__(self) -> None:
        self.nodes: set[str] = set()
        # (from, to) -> why: the header included, or a symbol used
        self.edges: dict[tuple[str, str], str] = {}

    def add(self, a: str, b: str, why: str) -> None:
        if a != b:
            self.edges.setdefault((a, b), why)

    def succ(self, a: str) -> Iterator[str]:
        return (y for (x, y) in self.edges if x == a)


def add_includes(g: Graph, src: Path) -> None:
    for path in sources(src):
        mod = module_of(src, path)
        g.nodes.add(mod)
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            for base in (src, path.parent):
                target = base / inc
                if target.is_file():
                    g.add(mod, module_of(src, target), f'#include "{inc}"')
                    break


def object_map(src: Path, build: Path) -> dict[Path, str]:
    """criu's objects under @build, each with its module (meson names an
    object after its source, the slashes made underscores)."""
    by_name = {str(p.relative_to(src)).replace("/", "_") + ".o": module_of(src, p)
               for p in sources(src) if p.suffix in (".c", ".S")}
    out = {}
    for obj in (build / "criu").glob("*.p/*.o"):
        if obj.name in by_name:
            out[obj] = by_name[obj.name]
    return out


def add_symbols(g: Graph, src: Path, build: Path) -> None:
    objs = object_map(src, build)
    if not objs:
        sys.exit(f"check-layers: no objects of criu/ under {build}/criu (build first)")
    defined: dict[str, str] = {}
    used: dict[str, set[str]] = {}
    for obj, mod in objs.items():
        out = subprocess.run(["nm", "-P", str(obj)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            name, kind = f[0], f[1]
            if kind == "U":
                used.setdefault(mod, set()).add(name)
            elif kind in "TDBRC":
                defined[name] = mod
    for mod, names in used.items():
        for name in sorted(names):
            if name in defined:
                g.add(mod, defined[name], name)


def cycles(g: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    succ: dict[str, list[str]] = {n: [] for n in g.nodes}
    for (a, b) in g.edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
    for v in sorted(succ):
        if v not in index:
            visit(v)
    return out


def check(g: Graph) -> list[str]:
    errors = []
    for mod in sorted(g.nodes):
        if layer_of(mod) is None:
            errors.append(f"{mod}: in no layer (add it to LAYERS in {Path(__file__).name})")
    for (a, b), why in sorted(g.edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if la is None or lb is None:
            continue
        if lb > la:
            errors.append(f"upward arrow: {a} ({LAYERS[la][0]}) -> {b} ({LAYERS[lb][0]}): {why}")
        elif (la == lb == layer_of("parts/") and a != PART_TABLE and b != "parts/part"
              and group_of(a) != group_of(b)):
            errors.append(f"a part reaches into another group: {a} -> {b}: {why}")
    for comp in cycles(g):
        inner = [f"{a} -> {b} ({why})" for (a, b), why in sorted(g.edges.items())
                 if a in comp and b in comp]
        errors.append("circle: " + ", ".join(comp) + "\n    " + "\n    ".join(inner))
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, help="a meson build directory: symbol arrows too")
    ap.add_argument("--src", type=Path, default=SRC, help="the tree to check (default: criu/)")
    ap.add_argument("--list", action="store_true", help="print every arrow")
    ap.add_argument("--dot", action="store_true", help="print the graph for dot(1)")
    args = ap.parse_args()
    g = Graph()
    src = args.src.resolve()
    add_includes(g, src)
    if args.build:
        add_symbols(g, src, args.build.resolve())
    if args.list:
        for (a, b), why in sorted(g.edges.items()):
            print(f"{a} -> {b}  ({why})")
    if args.dot:
        print("digraph criu {")
        for (a, b) in sorted(g.edges):
            print(f'\t"{a}" -> "{b}";')
        print("}")
    errors = check(g)
    for e in errors:
        print(f"check-layers: {e}", file=sys.stderr)
    print(f"check-layers: {len(g.nodes)} modules, {len(g.edges)} arrows, "
          f"{len(errors)} broken rule(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
