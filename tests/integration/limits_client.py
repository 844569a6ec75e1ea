#!/usr/bin/env python3
"""Raw SMB2 clients that try to make ringsmbd hold resources (issue 11,
docs/security.md "Resource limits"). Built on rawsmb.py's Conn.

usage: limits_client.py COMMAND PORT [ARGS...]
  hold-idle PORT N [FIRST_SRC]      N idle TCP connections (from 127.0.0.FIRST_SRC
                                    on, 200 per address); prints 'ready' and
                                    holds them until killed
  hold-frames PORT N [SRC]          N connections, each declaring an 8 MiB
                                    frame before NEGOTIATE and sending 2 MiB of it
  pipelined-reads PORT SHARE PID FILE N BOUND_MIB [PER_FRAME]
                                    N pipelined frames of 8 MiB of READs of FILE
                                    (PER_FRAME 2: a compound of two 4 MiB READs,
                                    whose data is copied), not read while the
                                    server's RSS is sampled; then reads and
                                    checks every response
  compound-burst PORT SHARE PID FILE K BOUND_MIB
                                    one compound of K 8 MiB READs: the server
                                    answers those that fit its memory bound
  half-open PORT N MAX_EXTRA_US     N unfinished session setups on one
                                    connection: most refused, and an ECHO
                                    costs less than MAX_EXTRA_US more after them
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


FRAME_PART = os.urandom(2 * MIB)  # of the 8 MiB declared: pages the server would touch


def hold_frames(n, src=200):
    socks = []
    for _ in range(n):
        try:
            s = connect_from(f"127.0.0.{src}")
            s.sendall(struct.pack(">I", 8 * MIB) + b"\xfeSMB" + FRAME_PART)
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


def read_request(c, fid, length, next_cmd=0):
    body = struct.pack("<HBBIQ16sIIIHHB", 49, 0x50, 0, length, 0, fid, 0, 0, 0, 0, 0, 0)
    msg = c.header(8, credits=256, charge=length // 65536, next_cmd=next_cmd) + body
    return msg + b"\0" * (7 if next_cmd else 0)  # the next element starts 8-byte aligned


def read_responses_ok(frame, want, count):
    """COUNT chained READ responses in FRAME, each carrying WANT."""
    at = 0
    for _ in range(count):
        status, next_cmd = struct.unpack_from("<I", frame, at + 8)[0], struct.unpack_from("<I", frame, at + 20)[0]
        off, dlen = struct.unpack_from("<BxI", frame, at + 64 + 2)
        if status != 0 or dlen != len(want) or frame[at + off:at + off + dlen] != want:
            print(f"response at {at}: status {status:#x} length {dlen}")
            return False
        at += next_cmd
    return True


def pipelined_reads(share, pid, name, n, bound_mib, per_frame=1):
    """N frames of PER_FRAME READs (a compound when 2: copied into memory,
    never sent from the file) of 8 MiB in all per frame, unread at first."""
    c = logged_in(share)
    st, fid = open_file(c, name)
    if st != 0:
        sys.exit(f"CREATE {name}: {st:#x}")
    c.request(13, struct.pack("<HH", 4, 0), credits=8000)  # ECHO: a wide credit window
    before = rss_kib(pid)
    length = 8 * MIB // per_frame
    reqs = bytearray()
    for _ in range(n):
        msg = b"".join(read_request(c, fid, length, 120 if i + 1 < per_frame else 0) for i in range(per_frame))
        reqs += struct.pack(">I", len(msg)) + msg
    c.s.settimeout(None)
    c.s.sendall(reqs)
    peak = before
    for _ in range(int(float(os.environ.get("HOLD_S", "3")) * 10)):  # the server answers all it will meanwhile
        time.sleep(0.1)
        peak = max(peak, rss_kib(pid))
    grew_mib = (peak - before) / 1024
    print(f"RSS {before // 1024} MiB before, peak {peak // 1024} MiB while {n} frames of {per_frame} x "
          f"{length // MIB} MiB READs were unread (+{grew_mib:.0f} MiB, bound {bound_mib} MiB)")
    with open(os.path.join(os.environ["SHARE_DIR"], name), "rb") as f:
        want = f.read(length)
    good = 0
    for _ in range(n):
        hdr = recv_exact(c.s, 4)
        frame = recv_exact(c.s, struct.unpack(">I", hdr)[0] & 0xFFFFFF)
        good += read_responses_ok(frame, want, per_frame)
    print(f"{good} of {n} responses complete and correct")
    return grew_mib <= bound_mib and good == n


def compound_burst(share, pid, name, k, bound_mib):
    """One frame: a compound of K 8 MiB READs, answered while its RSS is sampled."""
    c = logged_in(share)
    st, fid = open_file(c, name)
    if st != 0:
        sys.exit(f"CREATE {name}: {st:#x}")
    c.request(13, struct.pack("<HH", 4, 0), credits=8000)
    before = rss_kib(pid)
    length = 8 * MIB
    msg = b"".join(read_request(c, fid, length, 120 if i + 1 < k else 0) for i in range(k))
    c.s.settimeout(None)
    c.s.sendall(struct.pack(">I", len(msg)) + msg)
    peak = before
    for _ in range(30):
        time.sleep(0.1)
        peak = max(peak, rss_kib(pid))
    hdr = recv_exact(c.s, 4)
    frame = recv_exact(c.s, struct.unpack(">I", hdr)[0] & 0xFFFFFF)
    statuses, at = [], 0
    for _ in range(k):
        statuses.append(struct.unpack_from("<I", frame, at + 8)[0])
        at += struct.unpack_from("<I", frame, at + 20)[0]
    ok = statuses.count(0)
    grew_mib = (peak - before) / 1024
    print(f"compound of {k} x 8 MiB READs: {ok} answered, the rest "
          f"{sorted(set(hex(x) for x in statuses if x))}; RSS +{grew_mib:.0f} MiB (bound {bound_mib} MiB)")
    return grew_mib <= bound_mib and 0 < ok < k and all(x in (0, 0xC000009A) for x in statuses)


def session_setup_start(c):
    neg = b"NTLMSSP\0" + struct.pack("<II", 1, 0x00000205 | 0x00080000) + b"\0" * 16
    saved = c.session
    c.session = 0
    c.send_frame(c.header(1) + c._setup_body(neg))
    c.session = saved


def echo_us(c, rounds=300):
    """The median ECHO round trip on C, in microseconds."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        st, _ = c.request(13, struct.pack("<HH", 4, 0))
        times.append((time.perf_counter() - t0) * 1e6)
        if st != 0:
            raise RuntimeError(f"ECHO: {st}")
    return sorted(times)[rounds // 2]


def half_open(n, max_extra_us):
    c = rawsmb.Conn()
    c.negotiate()
    c.s.settimeout(30)
    before_us = echo_us(c)
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
    after_us = echo_us(c)
    print(f"ECHO round trip (median): {before_us:.0f} us before, {after_us:.0f} us after {n} half-open setups"
          f" (at most {max_extra_us} us more allowed)")
    return after_us - before_us < max_extra_us and statuses.get(0xC0000016, 0) < n


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
        per_frame = int(ARGS[6]) if len(ARGS) > 6 else 1
        sys.exit(0 if pipelined_reads(ARGS[1], int(ARGS[2]), ARGS[3], int(ARGS[4]), int(ARGS[5]), per_frame) else 1)
    elif CMD == "compound-burst":
        sys.exit(0 if compound_burst(ARGS[1], int(ARGS[2]), ARGS[3], int(ARGS[4]), int(ARGS[5])) else 1)
    elif CMD == "half-open":
        sys.exit(0 if half_open(int(ARGS[1]), int(ARGS[2])) else 1)
    elif CMD == "open-many":
        open_many(ARGS[1], int(ARGS[2]), int(ARGS[3]) if len(ARGS) > 3 else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
