#!/usr/bin/env python3
"""Blocking byte-range locks seen from the wire (MS-SMB2 3.3.5.14, 3.3.4.2).

Two raw SMB2 connections (rawsmb.Conn) on one file: a LOCK without
FAIL_IMMEDIATELY that conflicts is answered with an interim STATUS_PENDING
(SMB2_FLAGS_ASYNC_COMMAND, an AsyncId) and nothing else until the other
connection unlocks; then its final response arrives with the same AsyncId.
CANCEL by AsyncId answers STATUS_CANCELLED; closing the holder's handle
grants the waiter; a waiter whose connection drops leaves nothing behind.

usage: blocking_lock.py PORT SHARE
"""
import socket
import struct
import time
import sys

import rawsmb
from rawsmb import check

PENDING, CANCELLED, OK, NOT_GRANTED = 0x00000103, 0xC0000120, 0, 0xC0000055
ASYNC = 0x2
SHARED, EXCLUSIVE, UNLOCK, FAIL_IMMEDIATELY = 1, 2, 4, 0x10


def open_file(c, name):
    body = c.create_body(name.encode("utf-16-le"), disposition=3, access=0x3 | 0x80 | 0x100)
    st, r = c.request(5, body)
    check(f"CREATE {name}", st == OK, hex(st or 0))
    return r[64 + 64:64 + 80]


def lock_body(fid, offset, length, flags):
    return struct.pack("<HHI", 48, 1, 0) + fid + struct.pack("<QQII", offset, length, flags, 0)


def send_lock(c, fid, offset, length, flags):
    mid = c.mid
    c.send_frame(c.header(10) + lock_body(fid, offset, length, flags))
    return mid


def parse(r):
    status = struct.unpack_from("<I", r, 8)[0]
    flags = struct.unpack_from("<I", r, 16)[0]
    mid = struct.unpack_from("<Q", r, 24)[0]
    async_id = struct.unpack_from("<Q", r, 32)[0]
    return status, flags, mid, async_id


def nothing_arrives(c, seconds=0.7):
    c.s.settimeout(seconds)
    try:
        return c.recv_frame() is None
    finally:
        c.s.settimeout(5)


def wait_pending(c, fid, offset, length, what):
    mid = send_lock(c, fid, offset, length, EXCLUSIVE)
    status, flags, rmid, async_id = parse(c.recv_frame())
    check(f"{what}: interim STATUS_PENDING with an AsyncId",
          status == PENDING and flags & ASYNC and rmid == mid and async_id != 0, hex(status))
    return mid, async_id


def final(c, mid, async_id, want, what):
    r = c.recv_frame()
    if r is None:
        check(what, False, "no response")
        return
    status, flags, rmid, rid = parse(r)
    check(what, status == want and flags & ASYNC and rmid == mid and rid == async_id,
          f"status {hex(status)} mid {rmid} async {rid}")


def main():
    a, b = rawsmb.connect(), rawsmb.connect()
    fa, fb = open_file(a, "locked.bin"), open_file(b, "locked.bin")
    st, _ = a.request(10, lock_body(fa, 0, 10, EXCLUSIVE))
    check("a blocking lock without a conflict is granted at once", st == OK, hex(st or 0))

    mid, aid = wait_pending(b, fb, 5, 10, "conflicting blocking lock")
    check("it waits while the range stays locked", nothing_arrives(b))
    st, _ = a.request(10, lock_body(fa, 0, 10, UNLOCK))
    check("the holder unlocks", st == OK, hex(st or 0))
    final(b, mid, aid, OK, "the waiter is granted on unlock, same MessageId and AsyncId")
    st, _ = a.request(10, lock_body(fa, 5, 1, SHARED | FAIL_IMMEDIATELY))
    check("the waiter holds the range now", st == NOT_GRANTED, hex(st or 0))

    mid, aid = wait_pending(a, fa, 0, 20, "a second waiter")
    cancel = a.header(12, credits=0, flags=ASYNC)
    cancel = cancel[:32] + struct.pack("<Q", aid) + cancel[40:]
    a.mid -= 1  # CANCEL takes no MessageId of its own
    a.send_frame(cancel)
    final(a, mid, aid, CANCELLED, "CANCEL by AsyncId: STATUS_CANCELLED")

    mid, aid = wait_pending(a, fa, 0, 20, "a third waiter")
    st, _ = b.request(6, struct.pack("<HHI", 24, 0, 0) + fb)
    check("the holder closes its handle", st == OK, hex(st or 0))
    final(a, mid, aid, OK, "closing the holder's handle grants the waiter")

    fb = open_file(b, "locked.bin")
    wait_pending(b, fb, 0, 20, "a waiter whose connection then drops")
    b.s.close()
    st, _ = a.request(10, lock_body(fa, 0, 20, UNLOCK))
    check("unlock with a dropped waiter", st == OK, hex(st or 0))
    c = rawsmb.connect()
    fc = open_file(c, "locked.bin")
    # The UNLOCK may reach the server before it has seen b's connection
    # drop (another connection, perhaps another worker): then the dropped
    # waiter is granted first and its lock goes with its connection a moment
    # later. What must hold is that no lock is left behind.
    deadline = time.monotonic() + 5
    while True:
        st, _ = c.request(10, lock_body(fc, 0, 20, EXCLUSIVE | FAIL_IMMEDIATELY))
        if st != NOT_GRANTED or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    check("the dropped waiter left no lock behind", st == OK, hex(st or 0))
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
