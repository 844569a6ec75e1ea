#!/usr/bin/env python3
"""FLUSH runs its fsync off the worker thread (issue 14).

A file with much dirty data (written locally just before, not yet synced)
is flushed over connection A while connection B, served by the same single
worker, sends an ECHO. The FLUSH must go async (an interim STATUS_PENDING
with an AsyncId, then the final STATUS_SUCCESS with the same AsyncId), and
B's ECHO must be answered while the fsync still runs: with the fsync on the
worker, B waited for the whole fsync.

usage: flush_off_worker.py PORT SHARE NAME
"""
import struct
import sys
import time

import rawsmb
from rawsmb import check

PENDING, OK = 0x00000103, 0
ASYNC = 0x2
FLUSH, ECHO, CREATE = 7, 13, 5


def parse(r):
    status, flags = struct.unpack_from("<I", r, 8)[0], struct.unpack_from("<I", r, 16)[0]
    return status, flags, struct.unpack_from("<Q", r, 32)[0]


def main():
    name = sys.argv[3]
    a, b = rawsmb.connect(), rawsmb.connect()
    st, r = a.request(CREATE, a.create_body(name.encode("utf-16-le"), disposition=1, access=0x3))
    check(f"open {name}", st == OK, hex(st or 0))
    fid = r[64 + 64:64 + 80]

    start = time.monotonic()
    a.send_frame(a.header(FLUSH) + struct.pack("<HHI", 24, 0, 0) + fid)
    a.s.settimeout(60)
    status, flags, async_id = parse(a.recv_frame())
    if status == OK and not flags & ASYNC and time.monotonic() - start < 0.3:
        # The interim is held back a few milliseconds in case the request
        # completes: something else on the machine (a sync) wrote the data
        # back first, and the fsync had nothing to do.
        print("    (the fsync finished before an interim was due: the data was clean already; nothing to compare)")
        b.send_frame(b.header(ECHO) + struct.pack("<HH", 4, 0))
        check("ECHO on another connection answered", parse(b.recv_frame())[0] == OK)
        sys.exit(1 if rawsmb.results["fail"] else 0)
    check("FLUSH answered at once with an interim STATUS_PENDING", status == PENDING and flags & ASYNC,
          f"status {status:#x} flags {flags:#x}")

    b.send_frame(b.header(ECHO) + struct.pack("<HH", 4, 0))
    echo = b.recv_frame()
    echo_s = time.monotonic() - start
    check("ECHO on another connection answered", echo is not None and parse(echo)[0] == OK)

    final = a.recv_frame()
    flush_s = time.monotonic() - start
    status, flags, final_id = parse(final)
    check("FLUSH completes with STATUS_SUCCESS and the same AsyncId", status == OK and final_id == async_id,
          f"status {status:#x} async id {final_id} vs {async_id}")
    print(f"    ECHO answered after {echo_s * 1000:.0f} ms, FLUSH after {flush_s * 1000:.0f} ms")
    if flush_s >= 0.3:
        check("the ECHO did not wait for the fsync", echo_s < flush_s / 2, f"{echo_s:.3f} s vs {flush_s:.3f} s")
    else:
        print("    (the fsync took under 0.3 s: too fast to compare the ECHO with)")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
