#!/usr/bin/env python3
"""Lists the functions longer than a limit and the files longer than a
limit in the C++ sources below the given folders (STYLE.md: functions
under 70 lines, files under 600).

A function is a definition that starts at namespace scope (column 0, as
the sources are written: namespaces are not indented) and ends at the
brace that closes it; its length is the number of lines from its first
line to its closing brace. Member functions defined inside a class body
count as part of the class, not on their own.

usage: scripts/check-function-length.py [--max-function N] [--max-file N] DIR...
Exit status 1 when anything is over a limit, listed one per line."""
import argparse, os, re, sys

NOT_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|extern|using|typedef|static_assert|#|//|/\*|\*|template\s*<[^>]*>\s*$)")


def strip_code(line, in_comment):
    """LINE without comments, string and character literals; whether a
    block comment is still open at its end."""
    out, i = [], 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_comment = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line[i] in "\"'":
            quote, i = line[i], i + 1
            while i < len(line) and line[i] != quote:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def functions(path):
    """(name, first line, length) of each namespace-scope function in PATH."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    code, in_comment = [], False
    for l in lines:
        c, in_comment = strip_code(l, in_comment)
        code.append(c)
    i = 0
    while i < len(code):
        c = code[i]
        if not c or c[0].isspace() or c.startswith("}") or NOT_FUNCTION.match(c) or "(" not in c:
            i += 1
            continue
        # The signature runs to the first '{' (a definition) or ';' (a declaration).
        j, sig = i, ""
        while j < len(code):
            sig += code[j]
            if "{" in code[j] or ";" in code[j]:
                break
            j += 1
        if j >= len(code) or ";" in sig.split("{")[0] or "=" in sig.split("(")[0]:
            i = j + 1
            continue
        depth, k = 0, j
        while k < len(code):
            depth += code[k].count("{") - code[k].count("}")
            if depth <= 0 and ("}" in code[k] or k > j):
                break
            k += 1
        name = re.search(r"([~\w:]+(?:operator\S*)?)\s*\(", c)
        yield (name.group(1) if name else c.strip()), i + 1, k - i + 1
        i = k + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-function", type=int, default=70)
    ap.add_argument("--max-file", type=int, default=600)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    over = []
    for d in a.dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith((".cpp", ".hpp")):
                    continue
                p = os.path.join(root, f)
                n = sum(1 for _ in open(p, encoding="utf-8", errors="replace"))
                if n > a.max_file:
                    over.append(f"{p}: {n} lines (file limit {a.max_file})")
                for name, line, length in functions(p):
                    if length > a.max_function:
                        over.append(f"{p}:{line}: {name} is {length} lines (function limit {a.max_function})")
    print("\n".join(sorted(over)))
    print(f"{len(over)} over the limits" if over else "every file and function within the limits")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
