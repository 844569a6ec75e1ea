#!/usr/bin/env python3
"""Directory leases seen from the wire (MS-SMB2 3.3.1.4, 3.3.5.9.11, 2.2.23.2).

Two raw SMB 3.0 connections that offer SMB2_GLOBAL_CAP_DIRECTORY_LEASING
(one that does not is offered none and gets no directory lease). A holds
an RH lease on a directory (asked for with an RqLs v2 context); each change B makes to the directory's entries
(create, rename, delete, a write to a file in it, closed) sends A a lease
break from RH to nothing that needs an acknowledgment, and B's request does
not wait for it. A change A makes through an open whose ParentLeaseKey names
the lease breaks nothing.

With the share's path on disk (SHARE_DIR), a local process (not through
SMB) creating, renaming and removing an entry of the directory breaks the
lease too: the server watches a leased directory with inotify.

usage: directory_lease.py PORT SHARE [SHARE_DIR]
"""
import os
import struct
import subprocess
import sys

import rawsmb
from rawsmb import check

OK, PENDING = 0, 0x00000103
R, H, W = 1, 2, 4
CAP_DIRECTORY_LEASING = 0x20
OPLOCK_BREAK = 0x12
DIR_KEY, FILE_KEY = os.urandom(16), os.urandom(16)


def connect(capabilities=CAP_DIRECTORY_LEASING):
    c = rawsmb.Conn()
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, capabilities, os.urandom(16), 0, 0, 0) + struct.pack("<H", 0x0300)
    st, r = c.request(0, body)
    if st != OK:
        check("NEGOTIATE 3.0", False, hex(st or 0))
        sys.exit(1)
    caps = struct.unpack_from("<I", r, 64 + 24)[0]
    if c.anonymous_session() != OK or c.tree_connect(rawsmb.SHARE) != OK:
        check("session and tree", False)
        sys.exit(1)
    return c, caps


def lease_v2_context(key, state, parent=None):
    # SMB2_CREATE_REQUEST_LEASE_V2 (2.2.13.2.10), in an RqLs create context.
    flags = 0x4 if parent else 0  # SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET
    data = key + struct.pack("<IIQ", state, flags, 0) + (parent or b"\0" * 16) + struct.pack("<HH", 0, 0)
    return struct.pack("<IHHHHI", 0, 16, 4, 0, 24, len(data)) + b"RqLs" + b"\0" * 4 + data


def create(c, name, disposition, options, access, lease=None):
    """CREATE; returns (status, FileId, lease state or None)."""
    n = name.encode("utf-16-le")
    ctx = lease or b""
    name_off = 64 + 56
    ctx_off = (name_off + len(n) + 7) // 8 * 8 if ctx else 0
    pad = b"\0" * (ctx_off - name_off - len(n)) if ctx else b""
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0xFF if lease else 0, 2, 0, 0, access, 0, 7, disposition, options,
                       name_off, len(n), ctx_off, len(ctx)) + (n or b"\0") + pad + ctx
    st, r = c.request(5, body)
    if st != OK:
        return st, None, None
    fid = r[64 + 64:64 + 80]
    state = None
    if r[64 + 2] == 0xFF:
        ctx_at = struct.unpack_from("<I", r, 64 + 80)[0]
        data_off = struct.unpack_from("<H", r, ctx_at + 10)[0]
        state = struct.unpack_from("<I", r, ctx_at + data_off + 16)[0]
    return st, fid, state


def break_arrives(c, what, seconds=2.0):
    """The next frame on C is a lease break of DIR_KEY from RH to nothing; acknowledges it."""
    c.s.settimeout(seconds)
    try:
        r = c.recv_frame()
    finally:
        c.s.settimeout(5)
    if r is None:
        check(what, False, "no break")
        return
    cmd = struct.unpack_from("<H", r, 12)[0]
    mid = struct.unpack_from("<Q", r, 24)[0]
    if cmd != OPLOCK_BREAK or mid != 0xFFFFFFFFFFFFFFFF:
        check(what, False, f"command {cmd} mid {mid}")
        return
    flags, key, cur, new = struct.unpack_from("<I16sII", r, 64 + 4)
    check(what, key == DIR_KEY and cur == R | H and new == 0 and flags & 1, f"{cur} -> {new} flags {flags}")
    ack = struct.pack("<HHI16sIQ", 36, 0, 0, DIR_KEY, 0, 0)
    st, _ = c.request(OPLOCK_BREAK, ack)
    check(what + ": acknowledged", st == OK, hex(st or 0))


def nothing_arrives(c, seconds=0.7):
    c.s.settimeout(seconds)
    try:
        return c.recv_frame() is None
    finally:
        c.s.settimeout(5)


def lease_dir(a):
    st, fid, state = create(a, "dl", 3, 0x1, 0x80 | 0x1, lease_v2_context(DIR_KEY, R | H | W))
    check("the directory is leased RH (W is never granted on a directory)", st == OK and state == R | H,
          f"{hex(st or 0)} state {state}")
    return fid


def local_changes(a, path):
    """Changes made on the server's disk, not through SMB (at most a
    second late: the server judges such an event at its next tick)."""
    subprocess.run(["touch", os.path.join(path, "local.txt")], check=True)
    break_arrives(a, "a local touch of a new file breaks the directory lease", seconds=5)
    lease_dir(a)
    os.rename(os.path.join(path, "local.txt"), os.path.join(path, "local2.txt"))
    break_arrives(a, "a local rename breaks the directory lease", seconds=5)
    lease_dir(a)
    os.remove(os.path.join(path, "local2.txt"))
    break_arrives(a, "a local removal breaks the directory lease", seconds=5)


def main():
    a, caps = connect()
    b, _ = connect()
    check("SMB2_GLOBAL_CAP_DIRECTORY_LEASING is offered on SMB 3.0 to a client that offers it",
          caps & CAP_DIRECTORY_LEASING, hex(caps))
    plain, plain_caps = connect(capabilities=0)
    check("... and not to one that does not (impacket 0.10 breaks on it)", not plain_caps & CAP_DIRECTORY_LEASING,
          hex(plain_caps))
    st, fid, state = create(plain, "dl", 3, 0x1, 0x80 | 0x1, lease_v2_context(os.urandom(16), R | H))
    check("... which gets no directory lease either", st == OK and not state, f"{hex(st or 0)} state {state}")
    plain.close_fid(fid)
    plain.s.close()
    dir_fid = lease_dir(a)

    st, fid, _ = create(b, "dl\\new.txt", 2, 0x40, 0x3 | 0x80 | 0x10000)
    check("another client creates a file in it, without waiting", st == OK, hex(st or 0))
    break_arrives(a, "the create breaks the directory lease RH -> none")
    lease_dir(a)

    st = b.request(9, struct.pack("<HHIQ", 49, 64 + 48, 4, 0) + fid + struct.pack("<IIHHI", 0, 0, 0, 0, 0) + b"data")[0]
    check("a write to the file", st == OK, hex(st or 0))
    check("breaks nothing before the file is closed", nothing_arrives(a))
    b.request(6, struct.pack("<HHI", 24, 0, 0) + fid)
    break_arrives(a, "closing the written file breaks the directory lease")
    lease_dir(a)

    st, fid, _ = create(b, "dl\\new.txt", 1, 0x40, 0x80 | 0x10000)
    new = "dl\\renamed.txt".encode("utf-16-le")
    info = struct.pack("<B7sQI", 0, b"\0" * 7, 0, len(new)) + new
    st = b.request(17, struct.pack("<HBBIHHI", 33, 1, 10, len(info), 64 + 32, 0, 0) + fid + info)[0]
    check("a rename in the directory", st == OK, hex(st or 0))
    break_arrives(a, "the rename breaks the directory lease")
    lease_dir(a)

    st = b.request(17, struct.pack("<HBBIHHI", 33, 1, 13, 1, 64 + 32, 0, 0) + fid + b"\x01")[0]
    check("delete on close set", st == OK, hex(st or 0))
    check("breaks nothing before the last close", nothing_arrives(a))
    b.request(6, struct.pack("<HHI", 24, 0, 0) + fid)
    break_arrives(a, "the delete at close breaks the directory lease")
    lease_dir(a)

    st, fid, _ = create(a, "dl\\mine.txt", 2, 0x40, 0x3 | 0x80 | 0x10000,
                        lease_v2_context(FILE_KEY, R | H | W, parent=DIR_KEY))
    check("the holder creates a file naming the lease as its parent", st == OK, hex(st or 0))
    check("its own change breaks nothing", nothing_arrives(a))
    a.request(6, struct.pack("<HHI", 24, 0, 0) + fid)
    check("nor does closing it", nothing_arrives(a))
    if len(sys.argv) > 3:
        local_changes(a, os.path.join(sys.argv[3], "dl"))
    a.request(6, struct.pack("<HHI", 24, 0, 0) + dir_fid)
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
