#!/usr/bin/env python3
"""Checks that the build holds the layering: a layer's sources can include
the headers of exactly the layers it declares in daemon/CMakeLists.txt
(ringsmb_layer(<layer> DEPS ...), transitively) and no others.

For every layer L and every layer M it compiles, with L's own compile
command from <build>/compile_commands.json, a one-line file in daemon/L/
that includes a header of M, and compares what compiled with the declared
graph. Exit status 1 on any difference, listed one per line.
usage: scripts/check-layer-includes.py <build dir>"""
import json, os, re, shlex, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build"))
daemon = os.path.join(top, "daemon")

declared = {}
cmake = open(os.path.join(daemon, "CMakeLists.txt")).read()
for layer, deps in re.findall(r"^ringsmb_layer\((\w+)(?:\s+DEPS([^)]*))?\)", cmake, re.M):
    declared[layer] = {d.removeprefix("ringsmb_") for d in (deps or "").split() if d.startswith("ringsmb_")}

def closure(layer, seen=None):
    seen = {layer} if seen is None else seen
    for d in declared[layer]:
        if d not in seen:
            seen.add(d)
            closure(d, seen)
    return seen

commands = {}
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    rel = os.path.relpath(e["file"], daemon)
    layer = rel.split(os.sep)[0]
    if layer in declared and layer not in commands:
        commands[layer] = e

def header_of(layer):
    # The first header in the layer's folder or, for a layer split into
    # subfolders (smb2/), in its first subfolder that has one.
    for root, dirs, files in sorted(os.walk(os.path.join(daemon, layer))):
        hs = sorted(f for f in files if f.endswith(".hpp"))
        if hs:
            return os.path.relpath(os.path.join(root, hs[0]), daemon)
    return None

def compiles(layer, header):
    e = commands[layer]
    args, skip = [], False
    for a in shlex.split(e["command"]):
        if skip:
            skip = False
        elif a in ("-o", "-c", "-MF", "-MT"):
            skip = True
        elif a not in ("-MD", "ccache") and a != e["file"] and not a.endswith("ccache"):
            args.append(a)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", dir=os.path.join(daemon, layer),
                                     prefix=".layer_probe_") as f:
        f.write(f'#include "{header}"\n')
        f.flush()
        r = subprocess.run(args + ["-fsyntax-only", f.name], cwd=e["directory"], capture_output=True)
    return r.returncode == 0

probes = [(l, m, header_of(m)) for l in commands for m in declared if header_of(m)]
with ThreadPoolExecutor(max_workers=4) as pool:
    results = list(pool.map(lambda p: compiles(p[0], p[2]), probes))
bad = 0
for (l, m, h), ok in zip(probes, results):
    allowed = m in closure(l)
    if ok != allowed:
        bad += 1
        print(f"{l}/ including {h}: {'compiles' if ok else 'fails'}, but the layer graph "
              f"{'allows' if allowed else 'forbids'} it")
print(f"{len(probes)} includes probed over {len(commands)} layers: "
      + ("all as the layer graph says" if not bad else f"{bad} differ"))
sys.exit(1 if bad else 0)
