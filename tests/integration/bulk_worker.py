#!/usr/bin/env python3
"""A connection that streams large WRITEs moves to its worker's bulk worker
(issue 14, transport/worker.hpp "bulk worker") and keeps working there.

With one worker:
  1. connection A opens F with a batch oplock and streams 8 one-MiB WRITEs
     (two pipelined batches): all succeed and F holds their data (A has
     moved: the shell script checks ringsmb_connections_moved_total);
  2. connection B, still on the listening worker, opens F: the oplock
     break reaches A where it lives now (a task routed to the bulk
     worker), A acknowledges it, and B's CREATE completes;
  3. A goes on there: ECHO, a READ of what it wrote, a CREATE of a second
     file and another stream of WRITEs to it, CLOSE;
  4. a moved connection reset in the middle of a large frame leaves the
     server serving; a new connection streams, moves and closes cleanly.

usage: bulk_worker.py PORT SHARE NAME PATH_ON_DISK
"""
import os
import struct
import sys
import time

import rawsmb
from rawsmb import check, fields

OK = 0
ECHO, OPLOCK_BREAK = 13, 18
BATCH, LEVEL_II = 9, 1
READ_WRITE = 0x0012019F
MIB = 1 << 20


def stream(c, fid, at, batches, per_batch, content):
    """BATCHES sends of PER_BATCH pipelined 1 MiB WRITEs from offset AT; True when all succeed."""
    ok = True
    for _ in range(batches):
        frames, mids = b"", []
        for _ in range(per_batch):
            d = os.urandom(MIB)
            mids.append(c.mid)
            frames += c.write_frame(fid, at, d)
            content[at:at + MIB] = d
            at += MIB
        c.s.sendall(frames)
        got = c.finals(len(mids))
        ok = ok and all(got.get(m) == OK for m in mids)
    return ok


def echo_ok(c):
    return c.request(ECHO, struct.pack("<HH", 4, 0))[0] == OK


def break_and_ack(a, b, name):
    """B opens NAME, which A holds with a batch oplock: A gets the break and acknowledges it."""
    cre = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, READ_WRITE, 0, 7, 1, 0, 64 + 56,
                      len(name.encode("utf-16-le")), 0, 0) + name.encode("utf-16-le")
    b_mid = b.mid
    b.send_frame(b.header(5) + cre)
    r = a.recv_frame()
    if r is None:
        return False, "no break reached A"
    status, cmd, _, mid = fields(r)
    if cmd != OPLOCK_BREAK or mid != 0xFFFFFFFFFFFFFFFF:
        return False, f"A got command {cmd} status {status:#x} instead of a break"
    level, fid = r[64 + 2], r[64 + 8:64 + 24]
    ack = struct.pack("<HBBI", 24, min(level, LEVEL_II), 0, 0) + fid
    st, _ = a.request(OPLOCK_BREAK, ack)
    if st != OK:
        return False, f"the acknowledgement failed: {st:#x}" if st is not None else "no answer to the acknowledgement"
    got = b.finals(1)
    if got.get(b_mid) != OK:
        return False, f"B's CREATE: {got}"
    return True, ""


def main():
    name, path = sys.argv[3], sys.argv[4]
    a, b = rawsmb.connect(10), rawsmb.connect(10)
    st, o = a.create_ex(name, READ_WRITE, disposition=3, oplock=BATCH)
    check("A opens the file with a batch oplock", st == OK and o.oplock == BATCH, f"{st:#x}" if st else str(o and o.oplock))
    if st != OK:
        sys.exit(1)
    content = bytearray()

    # 1. The stream that moves A.
    ok = stream(a, o.fid, 0, 2, 4, content)
    check("A's 8 MiB of pipelined WRITEs succeed", ok)
    with open(path, "rb") as f:
        check("the file holds what they wrote", f.read() == bytes(content))

    # 2. A break for A, from B's open on the listening worker.
    t = time.monotonic()
    ok, why = break_and_ack(a, b, name)
    check("the oplock break reaches the moved connection, which acknowledges it", ok, why)
    check("...at once (not after the break timeout)", time.monotonic() - t < 5, f"{time.monotonic() - t:.1f} s")

    # 3. A goes on.
    check("A answers an ECHO", echo_ok(a))
    st, data = a.read_fid(o.fid, 65536, 3 * MIB)
    check("A reads back what it wrote", st == OK and data == bytes(content[3 * MIB:3 * MIB + 65536]), f"{st:#x}")
    st, o2 = a.create_ex(name + ".2", READ_WRITE, disposition=5)
    check("A creates a second file", st == OK, f"{st:#x}" if st else "")
    if st == OK:
        second = bytearray()
        check("A streams 6 MiB more to it", stream(a, o2.fid, 0, 2, 3, second))
        check("A closes it", a.close_fid(o2.fid) == OK)
        with open(path + ".2", "rb") as f:
            check("the second file holds what A wrote", f.read() == bytes(second))
    check("B answers an ECHO", echo_ok(b))

    # 4. Resets and a clean end.
    c = rawsmb.connect(10)
    st, oc = c.create_ex(name + ".reset", READ_WRITE, disposition=5)
    if st == OK:
        # Past kMoveToBulkAfter (4 MiB) every frame is a chance to move,
        # taken only when the connection is quiet then (its last WRITEs'
        # replies out): several, so a loaded machine still gives one.
        stream(c, oc.fid, 0, 1, 8, bytearray())
        c.s.sendall(c.write_frame(oc.fid, 8 * MIB, os.urandom(MIB))[:300 * 1024])
        time.sleep(0.1)
    c.abort()
    check("after a moved connection's reset in a large frame, B is served", echo_ok(b))
    d = rawsmb.connect(10)
    st, od = d.create_ex(name + ".clean", READ_WRITE, disposition=5)
    ok = st == OK and stream(d, od.fid, 0, 1, 10, bytearray()) and d.close_fid(od.fid) == OK
    check("a new connection streams, moves and closes its file", ok)
    d.s.close()
    a.close_fid(o.fid)
    e = rawsmb.connect(10)
    check("a connection made after them is served", echo_ok(e))
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
