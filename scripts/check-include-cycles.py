#!/usr/bin/env python3
"""Reports cycles in the include graph of daemon/ and kmod-shim/, at two
granularities:

- folders: a node per layer folder (daemon/<layer>, kmod-shim) and, inside
  daemon/smb2, per subfolder (smb2/engine, smb2/commands, smb2/leases ...);
- components: within daemon/smb2, a node per component (x.hpp and x.cpp
  together), so processor.cpp including async_engine.hpp and
  async_engine.cpp including processor.hpp is a cycle.

An edge A -> B is an `#include "B/..."` in a file of A. Each strongly
connected component of more than one node is printed with one include
that makes each of its edges. Exit status 1 when there is a cycle.
usage: scripts/check-include-cycles.py [source dir]"""
import os, re, sys

top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                      os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    """(path relative to the include root, absolute path) of each C++ file."""
    for root_name in ("daemon", "kmod-shim"):
        base = os.path.join(top, root_name)
        include_root = base if root_name == "daemon" else top
        for d, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith((".cpp", ".hpp")):
                    p = os.path.join(d, f)
                    yield os.path.relpath(p, include_root), p


def folder_of(rel):
    parts = rel.split("/")
    if parts[0] == "smb2" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def component_of(rel):
    return os.path.splitext(rel)[0] if rel.startswith("smb2/") else None


def cycles(edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


folder_edges, component_edges, why = {}, {}, {}
for rel, path in sources():
    for inc in INCLUDE.findall(open(path, encoding="utf-8", errors="replace").read()):
        a, b = folder_of(rel), folder_of(inc)
        if a != b:
            folder_edges.setdefault(a, set()).add(b)
            why.setdefault((a, b), f"{rel} includes {inc}")
        ca, cb = component_of(rel), component_of(inc)
        if ca and cb and ca != cb:
            component_edges.setdefault(ca, set()).add(cb)
            why.setdefault((ca, cb), f"{rel} includes {inc}")

bad = 0
for kind, edges in (("folders", folder_edges), ("smb2 components", component_edges)):
    for scc in cycles(edges):
        bad += 1
        print(f"include cycle between {kind}: {' '.join(scc)}")
        members = set(scc)
        for a in scc:
            for b in sorted(edges.get(a, ()) & members):
                print(f"  {why[(a, b)]}")
n_folders = len(set(folder_edges) | {b for bs in folder_edges.values() for b in bs})
print(f"{n_folders} folders, {len(set(component_edges))} smb2 components: "
      + ("no include cycle" if not bad else f"{bad} cycles"))
sys.exit(1 if bad else 0)
