"""Helpers of bench/run: process-tree CPU and memory, timed commands, smbench
invocations, results and the markdown table."""
import os
import resource
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def raise_nofile():
    """preexec_fn: 1,000 idle connections need more than the default 1,024 fds."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(hard, 65536)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    # comm may contain spaces; fields after the closing parenthesis are fixed.
    return s[s.rindex(")") + 2:].split()


def descendants(root):
    """root and every live process below it."""
    children = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                children.setdefault(int(_stat(e)[1]), []).append(int(e))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_cpu_seconds(root):
    """user+sys of the tree, including children already reaped (cutime/cstime):
    smbd forks a process per connection, which exits with the connection."""
    total = 0
    for pid in descendants(root):
        try:
            f = _stat(pid)
        except OSError:
            continue
        # utime, stime, cutime, cstime are fields 14-17 (1-based), 11-14 here.
        total += sum(int(x) for x in f[11:15])
    return total / TICK


def tree_memory_kib(root):
    """Sum of RSS and of PSS over the tree. PSS charges shared pages once,
    which is the honest number for smbd's forked children."""
    rss = pss = 0
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    k, v = line.split(":", 1)
                    if k == "Rss":
                        rss += int(v.split()[0])
                    elif k == "Pss":
                        pss += int(v.split()[0])
        except OSError:
            continue
    return {"rss": rss, "pss": pss}


def wait_for_signal():
    import signal
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


class PerfRecord:
    """with PerfRecord(pid, out): the process pid (its threads, and threads
    and children it starts meanwhile) sampled by perf's cpu-clock (this VM
    has no PMU) at `freq` Hz with call graphs, into `out`."""

    def __init__(self, pid, out, call_graph="dwarf,16384", freq=2000):
        self.cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(freq), "--call-graph", call_graph,
                    "-p", str(pid), "-o", out]
        self.log = out + ".log"

    def __enter__(self):
        with open(self.log, "w") as log:
            self.p = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT)
        time.sleep(1)  # perf attaches to every thread before the run starts
        if self.p.poll() is not None:
            raise RuntimeError(f"perf record exited at start (see {self.log})")
        return self

    def __exit__(self, *exc):
        import signal
        self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def sync():
    """Flush dirty pages between runs so one run's writeback does not bill the next."""
    os.sync()
    time.sleep(0.2)


class FreshFilesystem:
    """with FreshFilesystem(directory, uid, gid): a new ext4 filesystem (a
    sparse image beside the directory, loop-mounted on it) for one
    measurement, unmounted and deleted after.

    ext4 makes every create slower for minutes after a mass delete (its
    inode allocator checks each just-freed inode's deletion time:
    recently_deleted()), so a run that follows another server's run, or an
    earlier repetition, would pay for their deletions. A fresh filesystem
    gives each run the same start. The image is initialised in full
    (no lazy inode-table init), so no background kernel thread writes
    during the measurement. What was in the directory is hidden, not
    touched, while the filesystem is mounted on it."""

    def __init__(self, directory, uid, gid, size=2 << 30):
        self.directory, self.uid, self.gid, self.size = directory, uid, gid, size
        self.image = directory.rstrip("/") + ".img"

    def __enter__(self):
        with open(self.image, "wb") as f:
            f.truncate(self.size)
        try:
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.image],
                           check=True, capture_output=True)
            subprocess.run(["mount", "-o", "loop", self.image, self.directory], check=True, capture_output=True)
        except BaseException:
            os.unlink(self.image)
            raise
        os.chown(self.directory, self.uid, self.gid)
        os.chmod(self.directory, 0o755)
        return self

    def __exit__(self, *exc):
        # A server may hold the directory a moment after its client left
        # (smbd's connection process exiting, a tree being torn down).
        for _ in range(50):
            if subprocess.run(["umount", self.directory], capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
        else:
            print(f"bench: {self.directory} still busy after 10 s; detached (umount -l)", file=sys.stderr)
            subprocess.run(["umount", "-l", self.directory], check=True)
        os.unlink(self.image)


def alternate(servers, rep):
    return servers if rep % 2 == 0 else list(reversed(servers))


def run_timed(cmd, timeout=3600, stdin=subprocess.DEVNULL):
    """Runs cmd; returns (wall seconds, client user+sys seconds, stdout)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    wall = time.monotonic() - t0
    # communicate() reaped the child; its rusage is in RUSAGE_CHILDREN, so
    # measure the difference around the call instead.
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{out[-2000:]}")
    return wall, out


def measure(cmd, srv=None, timeout=3600):
    """Wall time, client CPU and (with srv) server CPU of one command."""
    before_srv = srv.cpu() if srv else 0.0
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, out = run_timed(cmd, timeout)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = {"wall": wall, "client_cpu": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)}
    if srv:
        time.sleep(0.3)  # let smbd's per-connection child exit and be reaped
        m["server_cpu"] = srv.cpu() - before_srv
    m["out"] = out[-400:]
    return m


def make_big_file(path, size):
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            f.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)


def parse_result(out):
    for line in reversed(out.splitlines()):
        if line.startswith("RESULT "):
            return {k: float(v) for k, v in (kv.split("=", 1) for kv in line.split()[1:])}
    raise RuntimeError("smbench printed no RESULT line:\n" + out[-2000:])


def smbench_cmd(build, srv, user, password, args, share="bench"):
    return [f"{build}/tools/smbench", "--host", "127.0.0.1", "--port", str(srv.port), "--user", user,
            "--password", password, "--share", share, *args]


def smbench(build, srv, user, password, args, share="bench", prefix=()):
    """One smbench run against srv; PREFIX goes before the command (e.g. nice)."""
    m = measure([*prefix, *smbench_cmd(build, srv, user, password, args, share)], srv)
    r = parse_result(m["out"])
    r.update(server_cpu=m["server_cpu"], client_cpu=m["client_cpu"], wall=m["wall"])
    if r.get("files"):
        r["per_file_us"] = m["server_cpu"] / r["files"] * 1e6
    return r


def smbench_local(build, directory, args):
    m = measure([f"{build}/tools/smbench", "--local", directory, *args])
    r = parse_result(m["out"])
    r["client_cpu"] = m["client_cpu"]
    return r


class IdleConnections:
    """with IdleConnections(...): n authenticated idle connections (one
    smbench --idle-connections process) held for the block."""

    def __init__(self, build, srv, user, password, n):
        self.cmd = smbench_cmd(build, srv, user, password, ["--idle-connections", str(n)])

    def __enter__(self):
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  preexec_fn=raise_nofile)
        for line in self.p.stdout:
            if line.startswith("READY"):
                return self
        self.p.wait(60)
        raise RuntimeError("smbench --idle-connections ended before READY")

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(60)
        time.sleep(1)


def hold_idle(build, srv, user, password, n):
    """Opens n authenticated idle connections with smbench; returns the
    server's memory while they are held."""
    with IdleConnections(build, srv, user, password, n):
        time.sleep(2)
        return srv.memory()


class PeakMemory:
    """with PeakMemory(srv) as pm: samples the server tree's RSS and PSS
    every 0.5 s during the block; pm.rss, pm.pss are the peaks (KiB)."""

    def __init__(self, srv):
        import threading
        self.srv, self.rss, self.pss = srv, 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            m = self.srv.memory()
            self.rss, self.pss = max(self.rss, m["rss"]), max(self.pss, m["pss"])
            if self.stop.wait(0.5):
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def guarded(res, test, server, fn):
    """Records fn()'s measurement; a failure is reported and the run goes on,
    so one broken case does not cost the rest of a long run."""
    try:
        res.add(test, server, fn())
    except Exception as e:  # noqa: BLE001
        print(f"bench/run: {test} on {server} failed: {e}", file=sys.stderr, flush=True)
        res.add(test, server, {"failed": 1})


class Results:
    def __init__(self):
        self.samples = {}  # test -> server -> list of dicts
        self.order = []

    def add(self, test, server, m):
        if test not in self.samples:
            self.samples[test] = {}
            self.order.append(test)
        self.samples[test].setdefault(server, []).append({k: v for k, v in m.items() if k != "out"})

    def median(self, test, server, key):
        vals = [s[key] for s in self.samples[test].get(server, []) if key in s]
        return statistics.median(vals) if vals else None


# (metric key, label, lower is better)
METRICS = {
    "extract": [("wall", "wall s", True), ("server_cpu", "server CPU s", True), ("client_cpu", "client CPU s", True),
                ("per_file_us", "server CPU µs/file", True),
                # The client does the same work in every run: server CPU per
                # client CPU is the server's cost at the machine's speed of
                # that moment.
                ("server_per_client", "server CPU / client CPU", True)],
    "smbench": [("files_s", "files/s", False), ("mb_s", "MB/s", False), ("per_file_us", "server CPU µs/file", True),
                ("p50_create_us", "CREATE p50 µs", True), ("p99_create_us", "CREATE p99 µs", True),
                ("p50_write_us", "WRITE p50 µs", True), ("p99_write_us", "WRITE p99 µs", True),
                ("p50_setinfo_us", "SET_INFO p50 µs", True), ("p99_setinfo_us", "SET_INFO p99 µs", True),
                ("p50_close_us", "CLOSE p50 µs", True), ("p99_close_us", "CLOSE p99 µs", True),
                ("p50_compound_us", "chain p50 µs", True), ("p99_compound_us", "chain p99 µs", True)],
    "echo": [("per_request_us", "server CPU µs/request", True), ("p50_us", "round trip p50 µs", True)],
    "windows": [("files_s", "files/s", False), ("per_file_us", "server CPU µs/file", True),
                ("p50_request_us", "request p50 µs", True), ("p99_request_us", "request p99 µs", True),
                ("errors", "failed requests", True)],
    "manyconn": [("files_s", "files/s", False), ("per_file_us", "server CPU µs/file", True),
                 ("p99_request_us", "request p99 µs", True), ("rss_mib", "server RSS MiB (peak)", True),
                 ("pss_mib", "server PSS MiB (peak)", True), ("errors", "failed requests", True)],
    "flush": [("files_s", "files/s", False), ("p50_request_us", "request p50 µs", True),
              ("p99_request_us", "request p99 µs", True), ("p99_ratio", "p99 with writer / alone", True),
              ("errors", "failed requests", True)],
    "large": [("mb_s", "MB/s", False), ("cpu_per_gib", "server CPU s/GiB", True)],
    "multichannel": [("mb_s", "MB/s", False), ("cpu_per_gib", "server CPU s/GiB", True)],
    "copy": [("wall", "wall s", True), ("mb_s", "MB/s", False), ("cpu_per_gib", "server CPU s/GiB", True),
             ("client_cpu", "client CPU s", True)],
    "kernel": [("per_file_us", "server CPU µs/file", True), ("requests_per_file", "requests/file", True),
               ("per_request_us", "server CPU µs/request", True), ("guest_wall", "guest wall s (TCG)", True)],
    "memory": [("idle_rss_mib", "idle RSS MiB", True), ("idle_pss_mib", "idle PSS MiB", True),
               ("conns_pss_mib", "PSS MiB with idle conns", True), ("per_conn_kib", "PSS KiB per idle conn", True),
               ("per_conn_rss_kib", "RSS KiB per idle conn", True)],
}


def fmt(v):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def values(res, test, server, key):
    return [x[key] for x in res.samples[test].get(server, []) if x.get(key) is not None]


def spread(vals):
    """The median and, with more than one value, the range under it."""
    if not vals:
        return "–"
    m = fmt(statistics.median(vals))
    return m if len(vals) == 1 else f"{m}<br>{fmt(min(vals))}–{fmt(max(vals))}"


def table(res, names=("ringsmbd", "Samba")):
    ratio_head = "ringsmbd/Samba" if names == ("ringsmbd", "Samba") else "A/B"
    lines = [f"| test | metric | {names[0]} | {names[1]} | {ratio_head} | local (this machine's limit) |",
             "|---|---|---:|---:|---:|---:|"]
    for test in res.order:
        for key, label, _ in METRICS[test.split()[0]]:
            r, s, loc = (values(res, test, srv, key) for srv in ("ringsmbd", "samba", "local"))
            if not r and not s and not loc:
                continue
            # One ratio per repetition: the two servers' runs of a repetition
            # are next to each other in time, so the machine's speed cancels.
            pairs = zip(res.samples[test].get("ringsmbd", []), res.samples[test].get("samba", []))
            ratios = [x[key] / y[key] for x, y in pairs if x.get(key) is not None and y.get(key)]
            lines.append(f"| {test} | {label} | {spread(r)} | {spread(s)} | {spread(ratios)} | {spread(loc)} |")
        fails = [sum(x.get("failed", 0) for x in res.samples[test].get(srv, [])) for srv in ("ringsmbd", "samba")]
        if any(fails):
            lines.append(f"| {test} | **failed runs** | {fails[0]} | {fails[1]} | – | – |")
    return "\n".join(lines)
