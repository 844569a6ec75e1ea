"""The table of bench/summary: ringsmbd against Samba and ksmbd, one row per
client pattern and metric, assembled from the JSON files that bench/run
(--json) and bench/guest-ksmbd (--json) wrote, and the summary's own
meta.json (when, which commit, the machine, how loaded, the commands).

Kept apart from the measuring so that it can be checked on its own
(bench/testdata/summary: canned JSON and the table it must give)."""
import json
import os
import re
import statistics

import benchlib as bl

# Which rows of bench/run's samples go into the table: (pattern, a regular
# expression on bench/run's test name, [(metric key, label)]). A pattern
# matches every test it names (extract 5000 and extract 20000 both, say).
RUN_ROWS = [
    ("extract", r"extract (\d+)", "smbclient -Tx, {0} files",
     [("per_file_us", "server CPU µs/file"), ("wall", "wall s"), ("server_per_client", "server CPU / client CPU")]),
    ("windows", r"windows signed C=(\d+) D=1", "Windows-shaped copy, signed, C={0}",
     [("files_s", "files/s"), ("per_file_us", "server CPU µs/file"), ("p50_request_us", "request p50 µs")]),
    ("kernel", r"kernel tar x (\d+)", "kernel client's tar x (6.1 guest, servers on the host), {0} files",
     [("per_file_us", "server CPU µs/file"), ("guest_wall", "guest wall s")]),
    ("large", r"large (smbclient|smbench) (signed|encrypted) (put|get|write|read)", "large file: {0} {1} {2}",
     [("mb_s", "MB/s"), ("cpu_per_gib", "server CPU s/GiB")]),
]

# bench/guest-ksmbd: per (files, mode), the metric computed from one run.
GUEST_METRICS = [
    ("server CPU µs/file", lambda r: r["server_cpu"] / r["files"] * 1e6),
    ("guest CPU µs/file", lambda r: r["guest_cpu"] / r["files"] * 1e6),
    ("wall s", lambda r: r["wall"]),
    # QEMU's own CPU time on the host over the run: the emulation's cost,
    # which other load on the host inflates far less than the guest's clock.
    ("host CPU of the emulation µs/file",
     lambda r: r["host_cpu"] / r["files"] * 1e6 if "host_cpu" in r else None),
]
GUEST_PATTERN = "kernel client's tar x (6.12 guest, servers in it), {0} files, {1}"

# The columns after the metric's: the servers ringsmbd is compared with, by
# their name in bench/run's samples ("samba") or bench/guest-ksmbd's runs.
OTHERS = [("samba", "ringsmbd/Samba"), ("ksmbd", "ringsmbd/ksmbd"),
          ("ksmbd-64k", "ringsmbd/ksmbd (64K max trans)")]


def cell(vals):
    """The median and, with more than one value, (min–max)."""
    if not vals:
        return "–"
    m = bl.fmt(statistics.median(vals))
    return m if len(vals) == 1 else f"{m} ({bl.fmt(min(vals))}–{bl.fmt(max(vals))})"


def ratios(mine, theirs):
    """One ratio per repetition: the two servers' runs of a repetition are
    next to each other in time, so the machine's speed mostly cancels."""
    return [a / b for a, b in zip(mine, theirs) if a is not None and b]


def run_rows(part, samples):
    """The table's rows from one bench/run JSON's samples."""
    rows = []
    for name, regex, pattern, metrics in RUN_ROWS:
        if name != part["name"]:
            continue
        for test, by_server in samples.items():
            m = re.fullmatch(regex, test)
            if not m:
                continue
            for key, label in metrics:
                vals = {srv: [x.get(key) for x in xs] for srv, xs in by_server.items()}
                mine = vals.get("ringsmbd", [])
                row = {"pattern": pattern_name(pattern, m.groups()), "metric": label,
                       "ringsmbd": [v for v in mine if v is not None], "command": part["command"]}
                for other, _ in OTHERS:
                    if other in vals:
                        row[other] = ratios(mine, vals[other])
                rows.append(row)
    return rows


def pattern_name(pattern, groups):
    """The pattern's name with its numbers (a file count) written 5,000."""
    return pattern.format(*(f"{int(g):,}" if g.isdigit() else g for g in groups))


def guest_rows(part, runs):
    """The table's rows from bench/guest-ksmbd's runs, paired by repetition."""
    rows = []
    for files, mode in sorted({(int(r["files"]), r["mode"]) for r in runs}):
        sel = [r for r in runs if int(r["files"]) == files and r["mode"] == mode]
        for label, fn in GUEST_METRICS:
            by = {}
            for r in sel:
                value = fn(r)
                if value is not None:
                    by.setdefault(r["server"], {})[int(r["rep"])] = value
            mine = by.get("ringsmbd", {})
            if not mine:
                continue
            row = {"pattern": GUEST_PATTERN.format(f"{files:,}", mode), "metric": label,
                   "ringsmbd": [mine[k] for k in sorted(mine)], "command": part["command"]}
            for other, _ in OTHERS:
                if other in by:
                    row[other] = [mine[k] / by[other][k] for k in sorted(mine) if by[other].get(k)]
            rows.append(row)
    return rows


def load(directory, name):
    with open(os.path.join(directory, name)) as f:
        return json.load(f)


def rows_of(directory, meta):
    rows = []
    for part in meta["parts"]:
        if not part.get("json"):
            continue
        data = load(directory, part["json"])
        if part["name"] == "guest":
            rows += guest_rows(part, data["runs"] if isinstance(data, dict) else data)
        else:
            rows += run_rows(part, data["samples"])
    return rows


def heading(meta):
    m = meta["machine"]
    quiet = meta.get("quiet")
    state = {True: "quiet", False: "**loaded**", None: "quietness not measured"}[quiet]
    idle = meta.get("idle_percent")
    idle_text = (f"; the CPUs {idle[0]:.0f}% idle in the {meta.get('idle_seconds', 5)} s before the run and "
                 f"{idle[1]:.0f}% in those after it") if idle else ""
    load_s, load_e = ("/".join(f"{x:.1f}" for x in meta.get(k, [])) or "?" for k in ("load_start", "load_end"))
    return (f"{meta['start']} to {meta.get('end', '(not finished)')}, ringsmbd at {meta['describe']} "
            f"({meta['commit'][:12]}); "
            f"{m['nproc']} CPUs, {m['mem_gib']} GiB, Linux {m['kernel']}, /tmp on {m['tmp_fs']}, "
            f"Samba {m['smbd'].removeprefix('Version ')}; {state}: load average (1, 5, 15 min) {load_s} "
            f"at the start, {load_e} at the end{idle_text}."
            + (" The build was not brought up to date with the source (--no-build)."
               if meta.get("build_updated") is False else ""))


def table(directory):
    """The markdown of bench/summary's table for the JSON files in directory."""
    meta = load(directory, "meta.json")
    lines = [heading(meta), "",
             "| client pattern | metric | ringsmbd | " + " | ".join(h for _, h in OTHERS) + " | command |",
             "|---|---|---:|" + "---:|" * len(OTHERS) + "---|"]
    for r in rows_of(directory, meta):
        cells = [cell(r["ringsmbd"])] + [cell(r[o]) if o in r else "–" for o, _ in OTHERS]
        lines.append(f"| {r['pattern']} | {r['metric']} | " + " | ".join(cells) + f" | `{r['command']}` |")
    failed = [p["name"] for p in meta["parts"] if p.get("failed")]
    if failed:
        lines += ["", f"**Failed or incomplete**: {', '.join(failed)} (see the commands' own output)."]
    return "\n".join(lines)
