#!/usr/bin/env bash
# Prints the layer graph that CMake builds (from `cmake --graphviz`) as a
# mermaid diagram: one node per ringsmb_<layer> library and program, one
# edge per declared target_link_libraries dependency. docs/architecture.md
# ("Layers") holds its output; re-run this after changing a layer's DEPS.
# usage: scripts/layer-graph.sh [build dir to configure, default a temp dir]
set -euo pipefail
top=$(git rev-parse --show-toplevel)
out=${1:-$(mktemp -d)}
cmake -S "$top" -B "$out" -G Ninja --graphviz="$out/graph/deps.dot" >/dev/null
python3 - "$out/graph/deps.dot" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
names = dict(re.findall(r'"(node\d+)" \[ label = "([^"]+)", shape = (\w+)', text) and
             [(n, l) for n, l, _ in re.findall(r'"(node\d+)" \[ label = "([^"]+)", shape = (\w+)', text)])
programs = {l for _, l, shape in re.findall(r'"(node\d+)" \[ label = "([^"]+)", shape = (\w+)', text) if shape == "egg"}
keep = lambda n: n.startswith("ringsmb") or n in programs
deps = {}
for a, b in re.findall(r'"(node\d+)" -> "(node\d+)"', text):
    a, b = names[a], names[b]
    if keep(a) and keep(b):
        deps.setdefault(a, set()).add(b)
def reach(n, seen=None):
    seen = set() if seen is None else seen
    for d in deps.get(n, ()):
        if d not in seen:
            seen.add(d)
            reach(d, seen)
    return seen
ident = lambda n: re.sub(r"\W", "_", n)
# A library node is its folder: ringsmb_<layer> is daemon/<layer>/,
# ringsmb_ctld is daemon/ringsmb-ctld/; programs are drawn round.
def node(n):
    if n in programs: return f"bin_{ident(n)}(({n}))"
    folder = "ringsmb-ctld" if n == "ringsmb_ctld" else n.removeprefix("ringsmb_")
    return f"{ident(n)}[{folder}/]"
print("```mermaid\ngraph BT")
for a in sorted(deps):
    for b in sorted(deps[a]):
        # Drawn only when no other dependency of A already reaches B.
        if not any(b in reach(c) for c in deps[a] if c != b):
            print(f"  {node(a)} --> {node(b)}")
print("```")
PY
