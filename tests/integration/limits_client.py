#!/usr/bin/env python3
"""Raw SMB2 clients that try to make ringsmbd hold resources (issue 11,
docs/security.md "Resource limits"). Built on rawsmb.py's Conn.

usage: limits_client.py COMMAND PORT [ARGS...]
  hold-idle PORT N [FIRST_SRC]      N idle TCP connections (from 127.0.0.FIRST_SRC
                                    on, 200 per address); prints 'ready' and
                                    holds them until killed
  hold-frames PORT N [SRC]          N connections, each declaring an 8 MiB
                                    frame before NEGOTIATE and sending 60 KiB of it
  pipelined-reads PORT SHARE PID FILE N BOUND_MIB
                                    N pipelined 8 MiB READs of FILE, not read
                                    while the server's RSS is sampled; then
                                    reads and checks every response
  half-open PORT N MAX_US           N unfinished session setups on one
                                    connection; then an ECHO must cost < MAX_US
  open-many PORT SHARE N [CONNS]    opens N files (anonymous, guest share) over
                                    CONNS connections without closing; prints
                                    how many succeeded and the first failure
"""
import os
import socket
import struct
import sys
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
CMD = sys.argv[1]
ARGS = sys.argv[2:]  # PORT first
sys.argv = [sys.argv[0], ARGS[0], ARGS[1] if len(ARGS) > 1 else "x"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawsmb  # noqa: E402  (reads PORT and SHARE from sys.argv[1:3])

PORT = rawsmb.PORT
MIB = 1024 * 1024


def connect_from(src):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", PORT))
    return s


def hold(socks):
    print(f"ready {len(socks)}", flush=True)
    while True:
        time.sleep(60)


def hold_idle(n, first_src=2):
    socks = []
    for i in range(n):
        try:
            socks.append(connect_from(f"127.0.0.{first_src + i // 200}"))
        except OSError:
            pass
    hold(socks)


def hold_frames(n, src=200):
    socks = []
    for _ in range(n):
        try:
            s = connect_from(f"127.0.0.{src}")
            s.sendall(struct.pack(">I", 8 * MIB) + b"\xfeSMB" + os.urandom(60 * 1024))
            socks.append(s)
        except OSError:
            pass
    hold(socks)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def logged_in(share):
    c = rawsmb.Conn()
    if c.negotiate() != 0 or c.anonymous_session() != 0 or c.tree_connect(share) != 0:
        sys.exit("cannot log in")
    return c


def open_file(c, name, access=0x81, disposition=1):
    st, r = c.request(5, c.create_body(name.encode("utf-16-le"), access=access, disposition=disposition))
    if st != 0:
        return st, None
    return st, r[64 + 64:64 + 80]


def recv_exact(s, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = s.recv_into(view[got:], n - got)
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return buf


def pipelined_reads(share, pid, name, n, bound_mib):
    c = logged_in(share)
    st, fid = open_file(c, name)
    if st != 0:
        sys.exit(f"CREATE {name}: {st:#x}")
    c.request(13, struct.pack("<HH", 4, 0), credits=8000)  # ECHO: a wide credit window
    before = rss_kib(pid)
    length = 8 * MIB
    reqs = bytearray()
    for _ in range(n):
        body = struct.pack("<HBBIQ16sIIIHHB", 49, 0x50, 0, length, 0, fid, 0, 0, 0, 0, 0, 0)
        msg = c.header(8, credits=256, charge=128) + body
        reqs += struct.pack(">I", len(msg)) + msg
    c.s.settimeout(None)
    c.s.sendall(reqs)
    peak = before
    for _ in range(int(float(os.environ.get("HOLD_S", "3")) * 10)):  # the server answers all it will meanwhile
        time.sleep(0.1)
        peak = max(peak, rss_kib(pid))
    grew_mib = (peak - before) / 1024
    print(f"RSS {before // 1024} MiB before, peak {peak // 1024} MiB while {n} x 8 MiB READs were unread"
          f" (+{grew_mib:.0f} MiB, bound {bound_mib} MiB)")
    ok = grew_mib <= bound_mib
    with open(os.path.join(os.environ["SHARE_DIR"], name), "rb") as f:
        want = f.read(length)
    good = 0
    for i in range(n):
        hdr = recv_exact(c.s, 4)
        frame = recv_exact(c.s, struct.unpack(">I", hdr)[0] & 0xFFFFFF)
        status = struct.unpack_from("<I", frame, 8)[0]
        off, dlen = struct.unpack_from("<BxI", frame, 64 + 2)
        if status == 0 and dlen == length and frame[off:off + dlen] == want:
            good += 1
        else:
            print(f"response {i}: status {status:#x} length {dlen}")
    print(f"{good} of {n} responses complete and correct")
    return ok and good == n


def session_setup_start(c):
    neg = b"NTLMSSP\0" + struct.pack("<II", 1, 0x00000205 | 0x00080000) + b"\0" * 16
    saved = c.session
    c.session = 0
    c.send_frame(c.header(1) + c._setup_body(neg))
    c.session = saved


def half_open(n, max_us):
    c = rawsmb.Conn()
    c.negotiate()
    c.s.settimeout(30)
    statuses = {}
    batch = 500
    for start in range(0, n, batch):  # pipelined in batches, answers read after each
        k = min(batch, n - start)
        for _ in range(k):
            session_setup_start(c)
        for _ in range(k):
            r = c.recv_frame()
            if r is None:
                print(f"connection dropped after {start} setups")
                return False
            st = struct.unpack_from("<I", r, 8)[0]
            statuses[st] = statuses.get(st, 0) + 1
    print("session setup answers:", {hex(k): v for k, v in statuses.items()})
    t0 = time.perf_counter()
    rounds = 200
    for _ in range(rounds):
        st, _ = c.request(13, struct.pack("<HH", 4, 0))
        if st != 0:
            print(f"ECHO: {st}")
            return False
    per_us = (time.perf_counter() - t0) / rounds * 1e6
    print(f"ECHO round trip after {n} half-open setups: {per_us:.0f} us (bound {max_us} us)")
    return per_us < max_us and statuses.get(0xC0000016, 0) < n


def open_many(share, n, conns):
    """Opens up to N files, taking turns over CONNS connections of the same user."""
    cs = [logged_in(share) for _ in range(conns)]
    for i in range(n):
        st, _ = open_file(cs[i % conns], f"f{i}", access=0x80, disposition=3)  # OPEN_IF, FILE_READ_ATTRIBUTES
        if st != 0:
            print(f"opened {i} first failure {st:#x}")
            return
    print(f"opened {n} first failure none")


def main():
    if CMD == "hold-idle":
        hold_idle(int(ARGS[1]), int(ARGS[2]) if len(ARGS) > 2 else 2)
    elif CMD == "hold-frames":
        hold_frames(int(ARGS[1]), int(ARGS[2]) if len(ARGS) > 2 else 200)
    elif CMD == "pipelined-reads":
        sys.exit(0 if pipelined_reads(ARGS[1], int(ARGS[2]), ARGS[3], int(ARGS[4]), int(ARGS[5])) else 1)
    elif CMD == "half-open":
        sys.exit(0 if half_open(int(ARGS[1]), int(ARGS[2])) else 1)
    elif CMD == "open-many":
        open_many(ARGS[1], int(ARGS[2]), int(ARGS[3]) if len(ARGS) > 3 else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
