#!/usr/bin/env python3
"""CHANGE_NOTIFY seen from the wire (MS-SMB2 2.2.35, 2.2.36, 3.3.5.19).

A raw SMB2 client (rawsmb.Conn) watches a directory of the share while a
local process (this script, with plain file-system calls on the share's
directory), another SMB2 connection and the same connection on another
handle create, rename and delete files. Each change must be reported with
its FILE_ACTION_* and name (old and new for a rename); WATCH_TREE reports
changes in subdirectories, also ones created after the watch began, and a
watch without it does not; CANCEL answers STATUS_CANCELLED, CLOSE
STATUS_NOTIFY_CLEANUP; changes beyond the buffer give STATUS_NOTIFY_ENUM_DIR.

usage: change_notify.py PORT SHARE SHARE_DIR [basic]
("basic": only the local create, rename and delete)
"""
import os
import socket
import struct
import sys
import time

import rawsmb
from rawsmb import check

SHARE_DIR = sys.argv[3]
OK, PENDING, CANCELLED = 0, 0x103, 0xC0000120
NOTIFY_CLEANUP, NOTIFY_ENUM_DIR, INSUFFICIENT_RESOURCES = 0x10B, 0x10C, 0xC000009A
ASYNC = 0x2
CREATE, CLOSE, CANCEL, CHANGE_NOTIFY = 5, 6, 12, 15
FILE_NAME, DIR_NAME, ATTRIBUTES, LAST_WRITE, SECURITY = 0x1, 0x2, 0x4, 0x10, 0x100
SET_INFO, FILE_BASIC_INFORMATION = 17, 4
WATCH_TREE = 0x1
ADDED, REMOVED, MODIFIED, OLD_NAME, NEW_NAME = 1, 2, 3, 4, 5


def create(c, name, disposition=1, options=0, access=0x1 | 0x80):
    n = name.encode("utf-16-le")
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, access, 0, 7, disposition, options, 64 + 56, len(n), 0,
                       0) + (n or b"\0")
    st, r = call(c, CREATE, body)
    check(f"CREATE {name!r}", st == OK, hex(st or 0))
    return r[64 + 64:64 + 80]


def open_dir(c, name):
    return create(c, name, disposition=1, options=0x1)  # FILE_DIRECTORY_FILE, FILE_LIST_DIRECTORY


def close(c, fid):
    return call(c, CLOSE, struct.pack("<HHI", 24, 0, 0) + fid)[0]


def parse(r):
    status, = struct.unpack_from("<I", r, 8)
    cmd, = struct.unpack_from("<H", r, 12)
    flags, = struct.unpack_from("<I", r, 16)
    mid, async_id = struct.unpack_from("<QQ", r, 24)
    return status, cmd, flags, mid, async_id


def entries(r):
    off, length = struct.unpack_from("<HI", r, 64 + 2)
    out, at = [], off
    while length:
        nxt, action, nlen = struct.unpack_from("<III", r, at)
        out.append((action, r[at + 12:at + 12 + nlen].decode("utf-16-le")))
        if not nxt:
            break
        at += nxt
    return out


def send_notify(c, fid, flt, flags=0, length=4096):
    """Sends a CHANGE_NOTIFY; returns (mid, async_id, final-or-None)."""
    mid = c.mid
    c.send_frame(c.header(CHANGE_NOTIFY) + struct.pack("<HHI", 32, flags, length) + fid + struct.pack("<II", flt, 0))
    r = c.recv_frame()
    status, _, flags_, rmid, aid = parse(r)
    if status == PENDING and flags_ & ASYNC:
        return mid, aid, None
    return mid, 0, r


stray = []  # entries of CHANGE_NOTIFY responses to requests given up on earlier
early = {}  # MessageId -> CHANGE_NOTIFY response read while waiting for another reply


def call(c, cmd, body):
    """A request on a connection that may have a CHANGE_NOTIFY outstanding."""
    mid = c.mid
    c.send_frame(c.header(cmd) + body)
    while True:
        r = c.recv_frame()
        if r is None or parse(r)[3] == mid:
            return (parse(r)[0] if r else None), r
        early[parse(r)[3]] = r


def recv_final(c, mid, timeout=5.0):
    if mid in early:
        return early.pop(mid)
    c.s.settimeout(timeout)
    try:
        while True:
            r = c.recv_frame()
            if r is None or parse(r)[3] == mid:
                return r
            if parse(r)[1] == CHANGE_NOTIFY and parse(r)[0] == OK:
                stray.extend(entries(r))
    finally:
        c.s.settimeout(5)


def collect(c, fid, flt, action, want, flags=0):
    """Keeps a CHANGE_NOTIFY outstanding while ACTION() runs; returns the
    (action, name) entries reported until all of WANT arrived (or 5 s)."""
    got, acted, deadline = [], False, time.time() + 5
    stray.clear()
    while time.time() < deadline:
        mid, aid, final = send_notify(c, fid, flt, flags)
        if not acted:
            action()
            acted = True
        r = final or recv_final(c, mid, max(0.1, deadline - time.time()))
        if r is None:
            break
        if parse(r)[0] == OK:
            got += entries(r)
        got += stray
        stray.clear()
        if all(w in got for w in want):
            break
    return got


def expect(what, got, want):
    check(what, all(w in got for w in want), f"got {got}, wanted {want}")


def main():
    p = lambda *parts: os.path.join(SHARE_DIR, *parts)
    os.makedirs(p("watched", "sub"), exist_ok=True)
    os.chmod(p("watched"), 0o777)  # the guest's files (ringsmbd may run as root, the guest as nobody)
    os.chmod(p("watched", "sub"), 0o777)
    a, b = rawsmb.connect(), rawsmb.connect()
    d = open_dir(a, "watched")

    mid, aid, final = send_notify(a, d, FILE_NAME | DIR_NAME, WATCH_TREE)
    check("a CHANGE_NOTIFY with nothing to report goes async (interim STATUS_PENDING)", final is None and aid != 0)
    check("it waits while nothing changes", recv_final(a, mid, 0.7) is None)
    open(p("watched", "local.txt"), "w").close()
    r = recv_final(a, mid)
    ok = r is not None and parse(r)[0] == OK and parse(r)[4] == aid
    check("a local process creates a file: final response, same AsyncId", ok, r and hex(parse(r)[0]))
    expect("... FILE_ACTION_ADDED local.txt", entries(r) if ok else [], [(ADDED, "local.txt")])

    got = collect(a, d, FILE_NAME | DIR_NAME, lambda: os.rename(p("watched", "local.txt"), p("watched", "renamed.txt")),
                  [(OLD_NAME, "local.txt"), (NEW_NAME, "renamed.txt")], WATCH_TREE)
    expect("a local rename: RENAMED_OLD_NAME then RENAMED_NEW_NAME", got, [(OLD_NAME, "local.txt"), (NEW_NAME, "renamed.txt")])
    check("... in that order", got.index((OLD_NAME, "local.txt")) < got.index((NEW_NAME, "renamed.txt"))
          if (OLD_NAME, "local.txt") in got and (NEW_NAME, "renamed.txt") in got else False)
    got = collect(a, d, FILE_NAME | DIR_NAME, lambda: os.unlink(p("watched", "renamed.txt")), [(REMOVED, "renamed.txt")],
                  WATCH_TREE)
    expect("a local delete: FILE_ACTION_REMOVED", got, [(REMOVED, "renamed.txt")])
    if len(sys.argv) > 4 and sys.argv[4] == "basic":  # the other backend: the reactor part only
        finish()

    def by_other_client():
        f = create(b, "watched\\fromb.txt", disposition=2, access=0x2 | 0x80)
        close(b, f)
        f = create(b, "watched\\fromb.txt", disposition=1, options=0x1000, access=0x10000 | 0x80)  # delete on close
        close(b, f)
    got = collect(a, d, FILE_NAME | DIR_NAME, by_other_client, [(ADDED, "fromb.txt"), (REMOVED, "fromb.txt")], WATCH_TREE)
    expect("another SMB client creates and deletes a file: ADDED, REMOVED", got,
           [(ADDED, "fromb.txt"), (REMOVED, "fromb.txt")])

    got = collect(a, d, FILE_NAME | DIR_NAME, lambda: close(a, create(a, "watched\\froma.txt", disposition=2, access=0x2 | 0x80)),
                  [(ADDED, "froma.txt")], WATCH_TREE)
    expect("the same client on another handle: ADDED", got, [(ADDED, "froma.txt")])

    got = collect(a, d, FILE_NAME | DIR_NAME, lambda: open(p("watched", "sub", "deep.txt"), "w").close(),
                  [(ADDED, "sub\\deep.txt")], WATCH_TREE)
    expect("WATCH_TREE: a file created in a subdirectory", got, [(ADDED, "sub\\deep.txt")])

    def new_subtree():
        os.mkdir(p("watched", "sub", "newdir"))
        time.sleep(0.3)  # the watch of the new directory is set up when its creation is seen
        open(p("watched", "sub", "newdir", "x.txt"), "w").close()
    got = collect(a, d, FILE_NAME | DIR_NAME, new_subtree, [(ADDED, "sub\\newdir"), (ADDED, "sub\\newdir\\x.txt")],
                  WATCH_TREE)
    expect("WATCH_TREE: a new subdirectory and a file in it", got, [(ADDED, "sub\\newdir"), (ADDED, "sub\\newdir\\x.txt")])

    d2 = open_dir(a, "watched")
    def sub_then_top():
        open(p("watched", "sub", "hidden.txt"), "w").close()
        open(p("watched", "visible.txt"), "w").close()
    got = collect(a, d2, FILE_NAME, sub_then_top, [(ADDED, "visible.txt")])
    check("without WATCH_TREE only the directory's own entries", (ADDED, "visible.txt") in got and
          not any("hidden" in n for _, n in got), f"got {got}")

    def append():
        with open(p("watched", "visible.txt"), "a") as f:
            f.write("more")
    dm = open_dir(a, "watched")  # an open's filter is its first request's (MS-SMB2 3.3.1.3)
    got = collect(a, dm, LAST_WRITE, append, [(MODIFIED, "visible.txt")])
    expect("LAST_WRITE: a local write gives FILE_ACTION_MODIFIED", got, [(MODIFIED, "visible.txt")])

    mid, aid, final = send_notify(a, d2, FILE_NAME)
    check("CANCEL: a request waits", final is None)
    cancel = a.header(CANCEL, credits=0, flags=ASYNC)
    cancel = cancel[:32] + struct.pack("<Q", aid) + cancel[40:]
    a.mid -= 1  # CANCEL takes no MessageId of its own
    a.send_frame(cancel)
    r = recv_final(a, mid)
    check("CANCEL by AsyncId: STATUS_CANCELLED", r is not None and parse(r)[0] == CANCELLED, r and hex(parse(r)[0]))

    mid, aid, final = send_notify(a, d2, FILE_NAME)
    check("CLOSE: a request waits", final is None)
    cmid = a.mid
    a.send_frame(a.header(CLOSE) + struct.pack("<HHI", 24, 0, 0) + d2)
    seen = {}
    for _ in range(2):
        r = a.recv_frame()
        if r is None:
            break
        seen[parse(r)[3]] = parse(r)[0]
    check("CLOSE of the handle: the CLOSE succeeds", seen.get(cmid) == OK, str(seen))
    check("... and the waiting CHANGE_NOTIFY ends with STATUS_NOTIFY_CLEANUP", seen.get(mid) == NOTIFY_CLEANUP, str(seen))

    set_info_changes(a, b)

    d3 = open_dir(a, "watched")
    mid, aid, final = send_notify(a, d3, FILE_NAME, length=64)
    open(p("watched", "o"), "w").close()
    r = recv_final(a, mid)
    check("a 64-byte buffer: one short name fits", r is not None and parse(r)[0] == OK and entries(r) == [(ADDED, "o")],
          r and f"{hex(parse(r)[0])} {entries(r) if parse(r)[0] == OK else ''}")
    for i in range(10):
        open(p("watched", f"o{i}"), "w").close()
    time.sleep(0.5)  # the changes arrive while no request waits: buffered
    mid, aid, final = send_notify(a, d3, FILE_NAME, length=64)
    r = final or recv_final(a, mid)
    check("more changes than the buffer holds: STATUS_NOTIFY_ENUM_DIR", r is not None and parse(r)[0] == NOTIFY_ENUM_DIR,
          r and hex(parse(r)[0]))
    mid, aid, final = send_notify(a, d3, FILE_NAME, length=64)
    open(p("watched", "p"), "w").close()
    r = final or recv_final(a, mid)
    check("after NOTIFY_ENUM_DIR the watch goes on", r is not None and parse(r)[0] == OK and entries(r) == [(ADDED, "p")],
          r and hex(parse(r)[0]))

    mid, aid, final = send_notify(a, d3, FILE_NAME)
    a.s.close()  # the connection ends with a request waiting: nothing may be left behind
    c = rawsmb.connect()
    d4 = open_dir(c, "watched")
    got = collect(c, d4, FILE_NAME, lambda: open(p("watched", "after.txt"), "w").close(), [(ADDED, "after.txt")])
    expect("a new connection watches after one was dropped mid-wait", got, [(ADDED, "after.txt")])
    for i in range(60):  # the test's server allows 50 watched directories per connection
        os.makedirs(p("big", f"d{i:02}"), exist_ok=True)
    e = rawsmb.connect()
    db = open_dir(e, "big")
    mid, aid, final = send_notify(e, db, FILE_NAME, WATCH_TREE)
    check("WATCH_TREE over more directories than 'max notify watches': STATUS_INSUFFICIENT_RESOURCES",
          final is not None and parse(final)[0] == INSUFFICIENT_RESOURCES, final and hex(parse(final)[0]))
    db = open_dir(e, "big")
    got = collect(e, db, FILE_NAME, lambda: open(p("big", "top.txt"), "w").close(), [(ADDED, "top.txt")])
    expect("... the connection's watches were given back: the directory alone can be watched", got, [(ADDED, "top.txt")])
    finish()


def set_basic(c, name, write_time=0, attrs=0, access_time=0):
    """SET_INFO FileBasicInformation on NAME through connection C."""
    f = create(c, name, disposition=1, access=0x100 | 0x80)  # FILE_WRITE_ATTRIBUTES
    info = struct.pack("<QQQQII", 0, access_time, write_time, 0, attrs, 0)
    st, _ = call(c, SET_INFO, struct.pack("<HBBIHHI", 33, 1, FILE_BASIC_INFORMATION, len(info), 64 + 32, 0, 0) + f + info)
    close(c, f)
    return st


def nothing_reported(c, fid, flt, action):
    """ACTION() while a CHANGE_NOTIFY with FLT waits on FID: True if nothing came within 0.7 s."""
    mid, aid, final = send_notify(c, fid, flt)
    if final is not None:
        return False
    action()
    return recv_final(c, mid, 0.7) is None


def set_info_changes(a, b):
    """Metadata changes another client makes through SET_INFO: each reported
    once, as MODIFIED, under its own filter (MS-FSA 2.1.5.14.2) only."""
    p = lambda *parts: os.path.join(SHARE_DIR, *parts)
    close(b, create(b, "watched\\meta.txt", disposition=2, access=0x2 | 0x80))  # the client's own file: it may set its times
    da = open_dir(a, "watched")
    got = collect(a, da, ATTRIBUTES, lambda: set_basic(b, "watched\\meta.txt", attrs=0x2), [(MODIFIED, "meta.txt")])
    expect("SET_INFO FileAttributes HIDDEN by another client: MODIFIED under ATTRIBUTES", got, [(MODIFIED, "meta.txt")])
    check("... reported once", got.count((MODIFIED, "meta.txt")) == 1, f"got {got}")
    dw = open_dir(a, "watched")
    got = collect(a, dw, LAST_WRITE, lambda: set_basic(b, "watched\\meta.txt", write_time=132_000_000_000_000_000),
                  [(MODIFIED, "meta.txt")])
    expect("SET_INFO LastWriteTime: MODIFIED under LAST_WRITE", got, [(MODIFIED, "meta.txt")])
    da2 = open_dir(a, "watched")
    # Both times at once: one utimensat, which inotify reports as IN_ATTRIB (one alone is IN_MODIFY or IN_ACCESS).
    both = lambda t: lambda: set_basic(b, "watched\\meta.txt", write_time=t, access_time=t)
    check("LastAccessTime and LastWriteTime (an IN_ATTRIB on disk) are not reported under ATTRIBUTES",
          nothing_reported(a, da2, ATTRIBUTES, both(133_000_000_000_000_000)))
    ds = open_dir(a, "watched")
    check("nor under SECURITY",
          nothing_reported(a, ds, SECURITY, both(134_000_000_000_000_000)))
    time.sleep(2.3)  # past the time a change to this name counts as the server's own (OwnChanges::kHoldMs)
    dl = open_dir(a, "watched")
    got = collect(a, dl, ATTRIBUTES, lambda: os.utime(p("watched", "meta.txt"), (1, 1)), [(MODIFIED, "meta.txt")])
    expect("a local utime (not the server's) still reaches an ATTRIBUTES watcher (inotify cannot tell which)", got,
           [(MODIFIED, "meta.txt")])
    for f in (da, da2, dw, ds, dl):
        close(a, f)
    a.s.settimeout(0.5)  # the NOTIFY_CLEANUPs of the requests left waiting may follow their CLOSEs
    try:
        while a.recv_frame() is not None:
            pass
    finally:
        a.s.settimeout(5)


def finish():
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
