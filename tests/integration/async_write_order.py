#!/usr/bin/env python3
"""Large WRITEs run their pwrite off the worker (issue 14), and what the
client sends after them on the same connection still sees their data.

Pipelined requests, all sent before any answer is read: four 1 MiB
WRITEs, READs inside each, a SET_INFO FileEndOfFileInformation that cuts
the file inside the last WRITE, a READ across the new end, a small WRITE
over the start of the second MiB (the READs before them large enough, in
part, for their data to go out by sendfile), a FLUSH, a READ of that spot, a CLOSE. Every
request must succeed, each READ must return what the requests before it
left (as if they ran one after the other), and the file on disk must be
that too.

usage: async_write_order.py PORT SHARE NAME PATH_ON_DISK
"""
import os
import struct
import sys

import rawsmb
from rawsmb import check

PENDING, OK = 0x00000103, 0
ASYNC = 0x2
CREATE, CLOSE, FLUSH, READ, WRITE, SET_INFO = 5, 6, 7, 8, 9, 17
MIB = 1 << 20


def charge(n):
    return max(1, (n + 65535) // 65536)


def main():
    name, path = sys.argv[3], sys.argv[4]
    c = rawsmb.connect(60)
    # FILE_OVERWRITE_IF, read/write data and attributes.
    st, r = c.request(CREATE, c.create_body(name.encode("utf-16-le"), disposition=5, access=0x0012019F))
    check(f"create {name}", st == OK, hex(st or 0))
    if st != OK:
        sys.exit(1)
    fid = r[64 + 64:64 + 80]

    chunks = [os.urandom(MIB) for _ in range(4)]
    expect = {}  # message id -> (what, expected data or None)
    frames = b""

    def add(what, cmd, body, n=1, data=None):
        nonlocal frames
        expect[c.mid] = (what, data)
        msg = c.header(cmd, charge=charge(n)) + body
        frames += struct.pack(">I", len(msg)) + msg

    def write(what, offset, data):
        body = struct.pack("<HHIQ", 49, 64 + 48, len(data), offset) + fid + struct.pack("<IIHHI", 0, 0, 0, 0, 0)
        add(what, WRITE, body + data, len(data))

    def read(what, offset, length, data):
        body = struct.pack("<HBBIQ", 49, 0, 0, length, offset) + fid + struct.pack("<IIIHHB", 0, 0, 0, 0, 0, 0)
        add(what, READ, body, length, data)

    for i, d in enumerate(chunks):
        write(f"WRITE {i} (1 MiB)", i * MIB, d)
    content = b"".join(chunks)
    # READs under 64 KiB have their data copied when they run; a larger one
    # on an unsigned session leaves its data in the file for sendfile when
    # the reply goes out, after the whole batch: the SET_INFO and WRITE
    # behind it must not change what it returns (the transport reads the
    # data into memory before they run). Both kinds, in turn.
    # The large ones cover the spots the small WRITE and the SET_INFO change.
    for i, at in enumerate((0, MIB - 100000, 2 * MIB + 12345, 3 * MIB - 100000)):
        n = 200000 if i % 2 else 60000
        read(f"READ of {n} bytes at {at}", at, n, content[at:at + n])
    n = 60000
    eof = 3 * MIB + 10
    add("SET_INFO end of file inside the last WRITE", SET_INFO,
        struct.pack("<HBBIHHI", 33, 1, 20, 8, 64 + 32, 0, 0) + fid + struct.pack("<Q", eof))
    content = content[:eof]
    read("READ across the new end of file", eof - 1000, n, content[eof - 1000:])
    small = b"small write over the second MiB"
    write("small WRITE", MIB, small)
    content = content[:MIB] + small + content[MIB + len(small):]
    add("FLUSH", FLUSH, struct.pack("<HHI", 24, 0, 0) + fid)
    read("READ of the small WRITE's spot", MIB - 5, 100, content[MIB - 5:MIB + 95])
    add("CLOSE", CLOSE, struct.pack("<HHI", 24, 0, 0) + fid)

    c.s.sendall(frames)
    answered = {}
    while len(answered) < len(expect):
        r = c.recv_frame()
        if r is None:
            check("every request answered", False, f"{len(answered)} of {len(expect)}")
            sys.exit(1)
        status, flags, mid = struct.unpack_from("<I", r, 8)[0], struct.unpack_from("<I", r, 16)[0], \
            struct.unpack_from("<Q", r, 24)[0]
        if status == PENDING and flags & ASYNC:
            continue  # an interim; the final answer follows
        answered[mid] = r
    for mid, (what, data) in expect.items():
        r = answered[mid]
        status = struct.unpack_from("<I", r, 8)[0]
        ok = status == OK
        detail = hex(status)
        if ok and data is not None:
            off, ln = struct.unpack_from("<BxI", r, 64 + 2)
            got = r[off:off + ln]
            ok = got == data
            detail = f"{len(got)} bytes, {'same' if got[:len(data)] == data else 'different'} content vs {len(data)}"
        check(what, ok, detail)
    with open(path, "rb") as f:
        on_disk = f.read()
    check("the file on disk is what the requests left, in order", on_disk == content,
          f"{len(on_disk)} bytes vs {len(content)}")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
