#!/usr/bin/env python3
"""Checks that the documents a user reads describe the project as it is,
not the history of how it was built: no issue numbers, no work-session
words, no development branch names, no paths of the machine a run was made
on. History belongs to git.

Scans README.md, docs/*.md and man/* (roff pages) and prints every line
that matches, as FILE:LINE: [what] text. Exit status 1 when any does.
usage: scripts/check-docs.py [SOURCE_DIR] [FILE...]

The patterns are meant to be specific: "session" is an SMB protocol term
and stays legal; only phrases that name a work session ("this session",
"before the stop") are flagged. A branch is flagged when the text says
"branch NAME" / "NAME branch" for a NAME other than main, or names one of
the development branches the project has had ("the bigio merge")."""
import os, re, sys

# Words that may follow or precede "branch" in ordinary prose.
BRANCH_WORDS = {
    "main", "a", "an", "the", "of", "that", "which", "is", "was", "per",
    "to", "for", "and", "or", "in", "on", "it", "its", "this", "one", "each",
    "every", "another", "other", "new", "same", "no", "any", "when", "where",
    "taken", "not", "be", "into", "from", "with", "by", "as", "if",
    "default", "release", "stable", "git", "your", "own", "feature",
    "else",  # "the else branch"
}
# Development branches the project has had; named in prose they are history.
# Names that are no English word are flagged anywhere in prose; the others
# only as "NAME merge" / "NAME branch".
DEV_NAMES = [
    "zcread", "bigwrite", "nameidx", "bigio", "nozero", "leasenotify",
    "winmeta2", "wintime", "ntacl2", "ntacl3",
]
DEV_WORDS = ["recycle", "fsctl", "offload", "bulk", "ntacl", "durable", "replay",
             "leases", "binding", "streams", "nas", "users", "acl", "opens"]

PATTERNS = [
    ("issue number", re.compile(r"\b[Ii]ssues?\s+#?\d+")),
    ("issue number", re.compile(r"\bissues?\s+\d+\s+and\s+\d+")),
    ("issue reference", re.compile(r"\b[Tt]he issue's\b|\bin an issue\b")),
    ("issue reference", re.compile(
        r"(?:[(\[]|\b(?:see|in|fix(?:es|ed)?|close[sd]?|PR|pull request|bug)\s+)#\d{1,5}\b", re.I)),
    ("work session", re.compile(
        r"\bwork session\b|\bnext session\b"
        r"|\b(?:in|during|for|after|before|until|of) this session\b(?!')"
        r"|\b(?:before|after|since|at) the stop\b|\bthe stop of\b", re.I)),
    ("branch name", re.compile(
        r"\b[Bb]ranch(?:es)?\s+[`'\"]?(?P<name>[A-Za-z0-9][\w.-]*)")),
    ("branch name", re.compile(
        r"\b(?:the|on|of|in)\s+[`'\"]?(?P<name>[A-Za-z0-9][\w.-]*)[`'\"]?\s+branch\b")),
    ("branch name", re.compile(
        r"(?<![\w/.`-])(?:" + "|".join(DEV_NAMES) + r")(?![\w./`-])")),
    ("branch name", re.compile(
        r"\b(?:" + "|".join(DEV_NAMES + DEV_WORDS) + r")\s+(?:merges?|branch)\b")),
    ("machine path", re.compile(r"/work/|/tmp/ringsmb-test|/tmp/wt\b|/home/[a-z]\w*/")),
    ("machine path", re.compile(r"/tmp/[\w.-]+/[\w.-]+\.(?:sh|py|tsv|log)\b")),
]


def documents(top):
    names = ["README.md"]
    names += sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(top, "docs"))
                    if n.endswith(".md"))
    mandir = os.path.join(top, "man")
    if os.path.isdir(mandir):
        names += sorted(os.path.join("man", n) for n in os.listdir(mandir)
                        if re.search(r"\.\d$", n))
    return names


def findings(path, text):
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in PATTERNS:
            for match in pattern.finditer(line):
                name = match.groupdict().get("name")
                if name is not None and name.lower() in BRANCH_WORDS:
                    continue
                yield f"{path}:{number}: [{what}] {line.strip()}"
                break
            else:
                continue
            break


def main(argv):
    top = os.path.abspath(argv[1]) if len(argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names = argv[2:] or documents(top)
    found = 0
    for name in names:
        with open(os.path.join(top, name), encoding="utf-8") as f:
            for finding in findings(name, f.read()):
                print(finding)
                found += 1
    if found:
        print(f"{found} line(s) of history in the documents: describe the current state "
              "(history belongs to git)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
