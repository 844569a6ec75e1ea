#!/usr/bin/env python3
"""Checks that the build holds the layering: a layer's sources can include
the headers of exactly the layers its ringsmb_layer() call declares
(daemon/CMakeLists.txt, kmod-shim/CMakeLists.txt): its own, those of the
libraries it names PUBLIC or PRIVATE, and those of their PUBLIC
dependencies, transitively; not those of a dependency's PRIVATE ones.

For every layer L and every layer M it compiles, with L's own compile
command from <build>/compile_commands.json, a one-line file in L's folder
that includes a header of M, and compares what compiled with the declared
graph. Exit status 1 on any difference, listed one per line.
usage: scripts/check-layer-includes.py <build dir>"""
import json, os, re, shlex, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build"))
daemon = os.path.join(top, "daemon")


class Layer:
    def __init__(self, name, args, cmake_dir):
        self.name, self.public, self.private, self.exclude, self.sources = name, set(), set(), [], []
        self.root, folder, key = daemon, name, None
        for a in args:
            if a in ("ROOT", "FOLDER", "SOURCES", "EXCLUDE", "PUBLIC", "PRIVATE"):
                key = a
            elif key == "ROOT":
                self.root = a.replace("${CMAKE_SOURCE_DIR}", top).replace("${CMAKE_CURRENT_SOURCE_DIR}", cmake_dir)
            elif key == "FOLDER":
                folder = a
            elif key == "SOURCES":
                self.sources.append(a)
            elif key == "EXCLUDE":
                self.exclude.append(a)
            elif a.startswith("ringsmb_"):
                (self.public if key == "PUBLIC" else self.private).add(a.removeprefix("ringsmb_"))
        self.folder = folder  # as includes name it: "<folder>/x.hpp"
        self.path = os.path.join(self.root, folder)

    def owns(self, path):
        rel = os.path.relpath(path, self.path)
        if rel.startswith(".."):
            return False
        if self.sources:
            return rel in self.sources
        return not any(rel.startswith(x + os.sep) for x in self.exclude)


layers = {}
for cmake_dir in (daemon, os.path.join(top, "kmod-shim")):
    text = open(os.path.join(cmake_dir, "CMakeLists.txt")).read()
    for name, body in re.findall(r"^ringsmb_layer\((\w+)([^)]*)\)", text, re.M):
        layers[name] = Layer(name, body.split(), cmake_dir)


def visible(layer):
    """Whose headers LAYER's sources see: its own, its dependencies', and
    the PUBLIC dependencies of those, transitively."""
    seen = {layer}
    todo = list(layers[layer].public | layers[layer].private)
    while todo:
        d = todo.pop()
        if d in seen or d not in layers:
            continue
        seen.add(d)
        todo.extend(layers[d].public)
    return seen


commands = {}
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    owners = [l for l in layers.values() if l.owns(os.path.abspath(e["file"]))]
    if owners:
        owner = max(owners, key=lambda l: len(l.path))  # smb2/engine before smb2
        commands.setdefault(owner.name, e)


def header_of(layer):
    # The first header in the layer's folder or, for a folder split into
    # subfolders (smb2/), in its first subfolder that has one.
    l = layers[layer]
    for root, dirs, files in sorted(os.walk(l.path)):
        dirs[:] = sorted(d for d in dirs if root != l.path or d not in l.exclude)
        hs = sorted(f for f in files if f.endswith(".hpp"))
        if hs:
            return os.path.join(l.folder, os.path.relpath(os.path.join(root, hs[0]), l.path))
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
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", dir=layers[layer].path, prefix=".layer_probe_") as f:
        f.write(f'#include "{header}"\n')
        f.flush()
        r = subprocess.run(args + ["-fsyntax-only", f.name], cwd=e["directory"], capture_output=True)
    return r.returncode == 0


missing = sorted(set(layers) - set(commands))
if missing:
    print("no compile command for " + ", ".join(missing))
    sys.exit(1)
probes = [(l, m, header_of(m)) for l in sorted(commands) for m in sorted(layers) if header_of(m)]
with ThreadPoolExecutor(max_workers=2) as pool:
    results = list(pool.map(lambda p: compiles(p[0], p[2]), probes))
bad = 0
for (l, m, h), ok in zip(probes, results):
    allowed = m in visible(l)
    if ok != allowed:
        bad += 1
        print(f"{layers[l].folder}/ including {h}: {'compiles' if ok else 'fails'}, but the layer graph "
              f"{'allows' if allowed else 'forbids'} it")
print(f"{len(probes)} includes probed over {len(commands)} layers: "
      + ("all as the layer graph says" if not bad else f"{bad} differ"))
sys.exit(1 if bad else 0)
