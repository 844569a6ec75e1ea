"""bench/run's `kernel` row: `tar x` of the standard tree by the Linux
kernel's cifs client, in a QEMU guest of tests/vm/run (Debian 12's kernel
under TCG), onto ringsmbd and onto Samba. The guest runs at TCG speed, so
its wall time says nothing; the server's CPU per file and the client's
requests per file do. One guest boot per measurement, alternating the
servers; the server CPU is taken around the boot (the guest is its only
client, and an idle server spends next to nothing)."""
import os
import re
import subprocess
import sys

import benchlib as bl

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def make_tree_tar(tmp, n):
    src = os.path.join(tmp, f"ksrc{n}")
    subprocess.run([sys.executable, os.path.join(HERE, "mktree.py"), os.path.join(src, "tree"), "--files", str(n)],
                   check=True, capture_output=True)
    tarf = os.path.join(tmp, f"ktree{n}.tar")
    subprocess.run(["tar", "cf", tarf, "-C", src, "tree"], check=True)
    subprocess.run(["rm", "-rf", src], check=True)
    return tarf


def tar_x_in_guest(srv, tarf, n, user, password, run_name):
    vm = os.path.join(TOP, "tests/vm/run")
    cmd = [vm, "--timeout", "3600", "--mem", "1024", "--guestfwd", f"445={srv.port}",
           "--file", os.path.join(HERE, "kernel_tar_x.sh"), "--file", f"{tarf}=/job/tree.tar",
           "--bin", "/usr/bin/tar",
           "--env", "SERVER=10.0.2.100", "--env", f"SMBUSER={user}", "--env", f"SMBPASS={password}",
           "--env", f"RUN={run_name}", "--", "sh /job/kernel_tar_x.sh"]
    before = srv.cpu()
    wall, out = bl.run_timed(cmd, timeout=3700)
    bl.sync()
    server_cpu = srv.cpu() - before
    m = re.search(r"^RESULT requests=(\d+) guest_wall=([\d.]+)", out, re.M)
    if not m:
        raise RuntimeError("the guest printed no RESULT line:\n" + out[-2000:])
    requests = int(m.group(1))
    files = sum(1 for line in subprocess.run(["tar", "tf", tarf], capture_output=True, text=True,
                                             check=True).stdout.splitlines() if not line.endswith("/"))
    if files != n:
        raise RuntimeError(f"{tarf} holds {files} files, not {n}")
    return {"server_cpu": server_cpu, "per_file_us": server_cpu / n * 1e6, "requests_per_file": requests / n,
            "guest_wall": float(m.group(2)), "per_request_us": server_cpu / requests * 1e6 if requests else 0.0}


def bench_kernel(a, servers, tmp, res, user, password, clean_dir):
    n = a.kernel_files
    tarf = make_tree_tar(tmp, n)
    key = f"kernel tar x {n}"
    for rep in range(a.reps):
        for srv in bl.alternate(servers, rep):
            clean_dir(srv.share)
            bl.sync()
            bl.guarded(res, key, srv.name, lambda: tar_x_in_guest(srv, tarf, n, user, password, f"run{rep}"))
    for srv in servers:
        clean_dir(srv.share)
    os.unlink(tarf)
