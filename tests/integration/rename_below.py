#!/usr/bin/env python3
"""A directory renamed while files below it are open (MS-FSA 2.1.5.14.11,
2.1.4.12; MS-SMB2 3.3.4.7), over one raw SMB 3.0 connection, the way the
Linux kernel client leaves them: it keeps a closed file's handle open with
its RH lease for a moment (deferred close, closetimeo) and a directory's
handle with its RH directory lease (cached directory), then renames the
directory above them.

- Opens below held only by a lease with handle caching: the rename breaks
  their H and waits (STATUS_PENDING); the client closes them on the break,
  as the kernel does, and the rename succeeds.
- An open below with no lease (a handle the client really holds): the
  rename fails with STATUS_ACCESS_DENIED at once, as on Windows.
- An open below whose holder acknowledges the break without closing: the
  rename fails with STATUS_ACCESS_DENIED once the break is over.
- Holders that never answer: STATUS_ACCESS_DENIED once the breaks time
  out (the server runs with a 1 s lease break timeout).

usage: rename_below.py PORT SHARE USER PASSWORD
"""
import os
import struct
import sys
import time

import rawsmb
import smb2user
from rawsmb import check

OK, PENDING, ACCESS_DENIED = 0, 0x00000103, 0xC0000022
R, H = 1, 2
CAP_LEASING, CAP_DIRECTORY_LEASING = 0x2, 0x20
CREATE, CLOSE, SET_INFO, OPLOCK_BREAK = 5, 6, 17, 0x12
DIRECTORY_FILE, NON_DIRECTORY_FILE = 0x1, 0x40
DELETE, READ_DATA, READ_ATTRIBUTES, SYNCHRONIZE = 0x10000, 0x1, 0x80, 0x100000
OPEN, CREATE_NEW, OPEN_IF = 1, 2, 3
FILE_RENAME_INFORMATION = 10


def connect(user, password):
    c = smb2user.UserConn()
    caps = CAP_LEASING | CAP_DIRECTORY_LEASING
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, caps, os.urandom(16), 0, 0, 0) + struct.pack("<H", 0x0300)
    st, _ = c.request(0, body)
    if st != OK or c.login(user, password) != OK or c.tree_connect(rawsmb.SHARE) != OK:
        check("NEGOTIATE 3.0, login and tree connect", False, hex(st or 0))
        sys.exit(1)
    return c


def lease_v2(key, state):
    # SMB2_CREATE_REQUEST_LEASE_V2 (2.2.13.2.10) in an RqLs context.
    data = key + struct.pack("<IIQ", state, 0, 0) + b"\0" * 16 + struct.pack("<HH", 0, 0)
    return rawsmb.create_contexts([(b"RqLs", data)])


def create(c, name, access, options, disposition=OPEN, key=None):
    """CREATE, with an RH lease of KEY when given; returns (status, FileId, granted lease state)."""
    st, made = c.create_ex(name, access, disposition=disposition, options=options,
                           oplock=0xFF if key else 0, contexts=lease_v2(key, R | H) if key else b"")
    if st != OK:
        return st, None, None
    lease = made.contexts.get(b"RqLs")
    return st, made.fid, struct.unpack_from("<I", lease, 16)[0] if lease else None


class Wire:
    """One connection's frames sorted as they arrive: final responses by
    message id (interim STATUS_PENDING noted), lease breaks in a queue; so a
    test can send a CLOSE while its rename waits."""

    def __init__(self, c):
        self.c, self.finals, self.pending, self.breaks = c, {}, set(), []

    def send(self, cmd, body):
        mid = self.c.mid
        self.c.send_frame(self.c.header(cmd) + body)
        return mid

    def pump(self, seconds):
        self.c.s.settimeout(seconds)
        try:
            r = self.c.recv_frame()
        finally:
            self.c.s.settimeout(5)
        if r is None:
            return False
        status, cmd, flags, mid = rawsmb.fields(r)
        if cmd == OPLOCK_BREAK and mid == 0xFFFFFFFFFFFFFFFF:
            _, key, cur, new = struct.unpack_from("<I16sII", r, 64 + 4)
            self.breaks.append((key, cur, new))
        elif status == PENDING and flags & 0x2:
            self.pending.add(mid)
        else:
            self.finals[mid] = status
        return True

    def answer(self, mid, seconds=5):
        """MID's final status (None when nothing comes for SECONDS)."""
        while mid not in self.finals:
            if not self.pump(seconds):
                return None
        return self.finals.pop(mid)

    def next_break(self, mid, seconds=5):
        """The next lease break, or None once MID is answered (or nothing comes)."""
        while not self.breaks:
            if mid in self.finals or not self.pump(seconds):
                return None
        return self.breaks.pop(0)

    def close(self, fid):
        return self.answer(self.send(CLOSE, struct.pack("<HHI", 24, 0, 0) + fid))


def send_rename(w, fid, new_name):
    """Sends SET_INFO FileRenameInformation; returns its message id (the answer is read later)."""
    n = new_name.encode("utf-16-le")
    info = struct.pack("<B7xQI", 0, 0, len(n)) + n
    body = struct.pack("<HBBIHHI", 33, 1, FILE_RENAME_INFORMATION, len(info), 64 + 32, 0, 0) + fid + info
    return w.send(SET_INFO, body)


def make_tree(c, top):
    for d in (top, top + "\\sub"):
        st, fid, _ = create(c, d, READ_ATTRIBUTES, DIRECTORY_FILE, CREATE_NEW)
        c.close_fid(fid)
    for f in (top + "\\a.txt", top + "\\sub\\b.txt"):
        st, fid, _ = create(c, f, READ_DATA | 0x2, NON_DIRECTORY_FILE, CREATE_NEW)
        c.write_fid(fid, b"data of " + f.encode())
        c.close_fid(fid)


def open_directory_for_rename(c, top):
    st, fid, _ = create(c, top, DELETE | READ_ATTRIBUTES | SYNCHRONIZE, DIRECTORY_FILE)
    check(f"{top}: opened with DELETE access", st == OK, hex(st or 0))
    return fid


def cached_handles_close_on_break(c):
    """The kernel client's case: handles below kept only by RH leases."""
    make_tree(c, "tree")
    keys = {os.urandom(16): "tree\\a.txt", os.urandom(16): "tree\\sub\\b.txt", os.urandom(16): "tree\\sub"}
    fids = {}
    for key, name in keys.items():
        options = DIRECTORY_FILE if name.endswith("sub") else NON_DIRECTORY_FILE
        st, fid, state = create(c, name, READ_DATA | READ_ATTRIBUTES | SYNCHRONIZE, options, key=key)
        check(f"{name}: open with an RH lease", st == OK and state == R | H, f"{hex(st or 0)} state {state}")
        fids[key] = fid
    dir_fid = open_directory_for_rename(c, "tree")
    w = Wire(c)
    mid = send_rename(w, dir_fid, "tree2")
    broken = []
    while (b := w.next_break(mid)) is not None:
        broken.append(b)
        if b[0] in fids:  # the client's answer to a break of a cached handle: close it
            w.close(fids.pop(b[0]))
    status = w.answer(mid)
    check("the rename waits for the breaks (STATUS_PENDING)", mid in w.pending)
    check("each cached handle below had its H broken",
          len(broken) == 3 and all(cur & H and not new & H for _, cur, new in broken), str(broken))
    check("the rename succeeds once the cached handles are closed", status == OK, hex(status or 0))
    c.close_fid(dir_fid)
    st, fid, _ = create(c, "tree2\\sub\\b.txt", READ_DATA, NON_DIRECTORY_FILE)
    check("the tree is under its new name", st == OK, hex(st or 0))
    if fid:
        c.close_fid(fid)


def open_handle_refuses(c):
    """A handle below that no lease keeps: ACCESS_DENIED at once, no break."""
    make_tree(c, "held")
    st, fid, _ = create(c, "held\\sub\\b.txt", READ_DATA, NON_DIRECTORY_FILE)
    dir_fid = open_directory_for_rename(c, "held")
    w = Wire(c)
    mid = send_rename(w, dir_fid, "held2")
    status = w.answer(mid)
    check("an open handle below: ACCESS_DENIED at once, nothing broken",
          status == ACCESS_DENIED and mid not in w.pending and not w.breaks, f"{hex(status or 0)} {w.breaks}")
    c.close_fid(fid)
    c.close_fid(dir_fid)


def acknowledged_but_kept_refuses(c):
    """A lease holder that acknowledges the break and keeps its handle: ACCESS_DENIED after the break."""
    make_tree(c, "kept")
    key = os.urandom(16)
    st, fid, state = create(c, "kept\\a.txt", READ_DATA | READ_ATTRIBUTES, NON_DIRECTORY_FILE, key=key)
    dir_fid = open_directory_for_rename(c, "kept")
    w = Wire(c)
    mid = send_rename(w, dir_fid, "kept2")
    b = w.next_break(mid)
    check("kept: the lease break arrives", b is not None and b[0] == key, str(b))
    if b:
        ack = w.send(OPLOCK_BREAK, struct.pack("<HHI16sIQ", 36, 0, 0, key, b[2], 0))
        check("kept: the break is acknowledged", w.answer(ack) == OK)
    status = w.answer(mid)
    check("kept: ACCESS_DENIED once the break is over and the handle stays",
          mid in w.pending and status == ACCESS_DENIED, hex(status or 0))
    c.close_fid(fid)
    c.close_fid(dir_fid)


def unanswered_breaks_refuse(c):
    """Holders that never answer: the rename ends with ACCESS_DENIED once the
    breaks time out (the server's 'lease break timeout', 1 s here), at
    once for all of them rather than one worker tick per handle."""
    make_tree(c, "mute")
    fids = []
    for i in range(6):
        name = f"mute\\sub\\m{i}.txt"
        c.close_fid(create(c, name, READ_DATA | 0x2, NON_DIRECTORY_FILE, CREATE_NEW)[1])
        st, fid, state = create(c, name, READ_DATA | READ_ATTRIBUTES, NON_DIRECTORY_FILE, key=os.urandom(16))
        fids.append(fid)
    dir_fid = open_directory_for_rename(c, "mute")
    w = Wire(c)
    started = time.monotonic()
    mid = send_rename(w, dir_fid, "mute2")
    status = w.answer(mid, seconds=30)
    took = time.monotonic() - started
    check("mute: ACCESS_DENIED once the unanswered breaks time out", status == ACCESS_DENIED and len(w.breaks) == 6,
          f"{hex(status or 0)} after {took:.1f} s, {len(w.breaks)} breaks")
    check("mute: within a few seconds of the break timeout", took < 4.5, f"{took:.1f} s")
    for fid in fids:
        w.close(fid)
    w.close(dir_fid)


def main():
    c = connect(sys.argv[3], sys.argv[4])
    cached_handles_close_on_break(c)
    open_handle_refuses(c)
    acknowledged_but_kept_refuses(c)
    unanswered_breaks_refuse(c)
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
