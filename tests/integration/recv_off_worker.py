#!/usr/bin/env python3
"""Large frames are received off the worker (issue 14, io/bulk_receiver.hpp).

With one worker:
  1. connection A sends the start of a 1 MiB WRITE and stalls; connection
     B's ECHOs are answered meanwhile; A sends the rest in pieces, and
     its WRITE succeeds with the data in the file;
  2. A pipelines, in one send, large WRITEs with small requests between
     them (the receiver takes each large frame and hands the socket back
     for each small one): all succeed, in order, and the file on disk is
     what they wrote;
  3. a connection reset in the middle of a large frame, and one reset
     while the receiver waits for the header after a large frame, leave
     the server serving (B's ECHO, a new connection's WRITE).

usage: recv_off_worker.py PORT SHARE NAME PATH_ON_DISK
"""
import os
import struct
import sys
import time

import rawsmb
from rawsmb import check

OK = 0
CREATE, ECHO = 5, 13
MIB = 1 << 20


def open_file(c, name):
    # FILE_OPEN_IF, read/write data and attributes.
    st, r = c.request(CREATE, c.create_body(name.encode("utf-16-le"), disposition=3, access=0x0012019F))
    check(f"create {name}", st == OK, hex(st or 0))
    if st != OK:
        sys.exit(1)
    return r[64 + 64:64 + 80]


def echo_frame(c):
    msg = c.header(ECHO) + struct.pack("<HH", 4, 0)
    return struct.pack(">I", len(msg)) + msg


def echo_answered(c):
    t = time.monotonic()
    c.s.sendall(echo_frame(c))
    r = c.finals(1)
    return list(r.values()) == [OK], time.monotonic() - t


def main():
    name, path = sys.argv[3], sys.argv[4]
    a, b = rawsmb.connect(30), rawsmb.connect(30)
    fid = open_file(a, name)
    content = bytearray()

    # 1. A stalled large frame.
    data = os.urandom(MIB)
    frame = a.write_frame(fid, 0, data)
    a.s.sendall(frame[:300 * 1024])
    time.sleep(0.3)
    slowest = 0.0
    ok = True
    for _ in range(10):
        answered, took = echo_answered(b)
        ok = ok and answered
        slowest = max(slowest, took)
    check("another connection's ECHOs are answered while a large frame stalls", ok and slowest < 2.0,
          f"answered {ok}, slowest {slowest:.3f} s")
    for off in range(300 * 1024, len(frame), 256 * 1024):
        a.s.sendall(frame[off:off + 256 * 1024])
        time.sleep(0.01)
    st = a.finals(1)
    check("the stalled WRITE succeeds once its rest comes", list(st.values()) == [OK], str(st))
    content[0:len(data)] = data

    # 2. Large and small requests pipelined in one send.
    frames = b""
    expect = []
    at = len(content)
    for i in range(6):
        size = MIB if i % 2 == 0 else 700 * 1024
        d = os.urandom(size)
        expect.append(a.mid)
        frames += a.write_frame(fid, at, d)
        content[at:at + size] = d
        at += size
        if i in (1, 3):  # a small WRITE and an ECHO between the large ones
            small = b"small write %d" % i
            expect.append(a.mid)
            frames += a.write_frame(fid, 100 + i, small)
            content[100 + i:100 + i + len(small)] = small
            expect.append(a.mid)
            frames += echo_frame(a)
    a.s.sendall(frames)
    got = a.finals(len(expect))
    check("pipelined large and small requests all succeed", all(got.get(m) == OK for m in expect),
          f"{sum(1 for m in expect if got.get(m) == OK)} of {len(expect)}")
    answered, _ = echo_answered(a)
    check("the connection serves small requests after the large ones", answered)
    with open(path, "rb") as f:
        on_disk = f.read()
    check("the file on disk is what the WRITEs left, in order", on_disk == bytes(content),
          f"{len(on_disk)} bytes vs {len(content)}")

    # 3. Resets during the receiver's work.
    c = rawsmb.connect(30)
    cfid = open_file(c, name + ".reset")
    c.s.sendall(c.write_frame(cfid, 0, os.urandom(MIB))[:300 * 1024])
    time.sleep(0.1)
    c.abort()
    d = rawsmb.connect(30)
    dfid = open_file(d, name + ".idle")
    d.s.sendall(d.write_frame(dfid, 0, os.urandom(MIB)))
    d.finals(1)
    time.sleep(0.1)  # the receiver now waits for d's next header
    d.abort()
    answered, _ = echo_answered(b)
    check("a reset in a large frame, and one while the next header is awaited: server still serves", answered)
    e = rawsmb.connect(30)
    efid = open_file(e, name + ".after")
    e.s.sendall(e.write_frame(efid, 0, os.urandom(MIB)))
    check("a new connection's large WRITE succeeds after them", list(e.finals(1).values()) == [OK])
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
