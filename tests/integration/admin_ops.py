#!/usr/bin/env python3
"""ringsmbctl acting on a live server's state, seen by raw SMB2 clients.

locks_leases: an open with an RWH lease and a durable handle, holding an
  exclusive and a shared byte-range lock, shows in `status --locks
  --leases` and `status --json` with its FILE ID, lease state and key,
  durability and both ranges; plain `status` shows neither section.
file_close: `file close ID` ends that open: the client's READ gets
  FILE_CLOSED, its lock and lease are gone (another client locks the range
  and gets an RWH lease on the file), its durable handle cannot be
  reconnected, and closing it again is "not found" (exit 3).
share_close: `share close NAME` disconnects the tree connects of two
  clients (one with a file open): their next request gets
  NETWORK_NAME_DELETED, the open file is released, a tree connect to
  another share stays, and a new tree connect to the share works.
disconnected: a durable open whose client's connection ended is kept for
  its reconnect: `status` lists it under "Disconnected durable opens" (not
  as an open file) with its share, path, user, last client and the time
  left, `status --json` with disconnected and kept_for_ms, --locks with
  the lock it still holds, --prometheus as ringsmb_disconnected_opens; its
  client reconnects it (DHnC); kept again, `file close ID` closes it for
  good and the reconnect then gets OBJECT_NAME_NOT_FOUND.
disabled_session: a session that logged in before `user disable` keeps
  working (as in Samba); a new login with the password gets
  ACCOUNT_DISABLED.

usage: admin_ops.py PORT SHARE OTHER_SHARE CTL CONFIG USER%PASS TEST...
"""
import json
import os
import re
import struct
import subprocess
import sys
import time

import rawsmb
import smb2user
from rawsmb import check

OTHER_SHARE = sys.argv[3]
CTL = [sys.argv[4], "--config", sys.argv[5]]
USER, PASSWORD = sys.argv[6].split("%", 1)

OK, FILE_CLOSED, NETWORK_NAME_DELETED = 0, 0xC0000128, 0xC00000C9
ACCOUNT_DISABLED, NOT_FOUND, LOCK_NOT_GRANTED = 0xC0000072, 0xC0000034, 0xC0000055
READ_WRITE = 0x1 | 0x2 | 0x80 | 0x100 | 0x10000
LEASE = 0xFF
RWH = 1 | 2 | 4
SHARED, EXCLUSIVE, FAIL_IMMEDIATELY = 0x1, 0x2, 0x10
name = smb2user.status_name


def ctl(*args):
    r = subprocess.run(CTL + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def status_json():
    rc, out = ctl("status", "--json")
    return json.loads(out) if rc == 0 else {"open_files": []}


def open_of(path):
    for o in status_json()["open_files"]:
        if o["path"] == path:
            return o
    return None


def leased_open(c, path, key, durable=True):
    contexts = [(b"RqLs", key + struct.pack("<IIQ", RWH, 0, 0))]
    if durable:
        contexts.append((b"DHnQ", b"\0" * 16))
    return c.create_ex(path, READ_WRITE, disposition=5, oplock=LEASE, contexts=rawsmb.create_contexts(contexts))


def test_locks_leases():
    c = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    key = os.urandom(16)
    st, o = leased_open(c, "locked.bin", key)
    check("CREATE with an RWH lease and DHnQ", st == OK and o.oplock == LEASE, name(st))
    if st != OK:
        return
    c.write_fid(o.fid, b"x" * 200)
    check("exclusive lock 0+10", c.lock_fid(o.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK)
    check("shared lock 100+5", c.lock_fid(o.fid, 100, 5, SHARED | FAIL_IMMEDIATELY) == OK)
    rc, text = ctl("status", "--locks", "--leases")
    check("status --locks --leases: exit 0", rc == 0, text)
    fid_hex = "0x%016x" % struct.unpack_from("<Q", o.fid, 0)[0]
    lock_rows = [l for l in text.splitlines() if l.strip().startswith(fid_hex) and "locked.bin" in l]
    check("... lists the open with its FILE ID (the CREATE's FileId.Persistent)",
          any("lease RWH" in l and l.rstrip().endswith("yes") for l in lock_rows), text)
    check("... lists its exclusive lock at 0 for 10 bytes",
          any(re.search(r"exclusive\s+0\s+10$", l) for l in lock_rows), text)
    check("... and its shared lock at 100 for 5 bytes", any(re.search(r"shared\s+100\s+5$", l) for l in lock_rows), text)
    check("... and the lease with its key", any(key.hex() in l and "RWH" in l for l in lock_rows), text)
    check("... counts 2 byte-range locks", "Byte-range locks: 2" in text, text)
    rc, plain = ctl("status")
    check("plain status shows the FILE ID but no lock or lease section",
          rc == 0 and fid_hex in plain and "Byte-range locks" not in plain and "Leases" not in plain, plain)
    j = open_of("locked.bin")
    check("status --json: file_id, durable, lease RWH, the key and both locks",
          j is not None and j["file_id"] == fid_hex and j["durable"] and j["oplock"] == "lease" and
          j["lease_state"] == "RWH" and j["lease_key"] == key.hex() and j["lock_count"] == 2 and
          {(l["offset"], l["length"], l["exclusive"]) for l in j["locks"]} == {(0, 10, True), (100, 5, False)}, str(j))
    c.close_fid(o.fid)


def test_file_close():
    c = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    key = os.urandom(16)
    st, o = leased_open(c, "victim.bin", key)
    check("CREATE victim.bin with an RWH lease and DHnQ", st == OK, name(st))
    if st != OK:
        return
    c.write_fid(o.fid, b"y" * 100)
    check("exclusive lock 0+10 on victim.bin", c.lock_fid(o.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK)
    j = open_of("victim.bin")
    check("status lists victim.bin", j is not None)
    if j is None:
        return
    rc, out = ctl("file", "close", j["file_id"])
    check("file close ID: exit 0", rc == 0 and "closed open file " + j["file_id"] in out, out)
    st, _ = c.read_fid(o.fid, 10)
    check("the client's READ on the closed handle: FILE_CLOSED", st == FILE_CLOSED, name(st))
    check("status no longer lists it", open_of("victim.bin") is None)
    d = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    st, o2 = leased_open(d, "victim.bin", os.urandom(16), durable=False)
    check("another client's open gets RWH at once (the lease went with the handle)",
          st == OK and struct.unpack_from("<I", o2.contexts.get(b"RqLs", b"\0" * 20), 16)[0] == RWH, name(st))
    if st == OK:
        check("... and takes the range the closed handle had locked",
              d.lock_fid(o2.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK)
        d.close_fid(o2.fid)
    # The durable handle is gone: a reconnect (DHnC) after the client's
    # connection ends finds nothing.
    c.abort()
    e = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    dhnc = rawsmb.create_contexts([(b"RqLs", key + struct.pack("<IIQ", RWH, 0, 0)), (b"DHnC", o.fid)])
    st, _ = e.create_ex("victim.bin", READ_WRITE, oplock=LEASE, contexts=dhnc)
    check("a durable reconnect of the closed handle: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    rc, out = ctl("file", "close", j["file_id"])
    check("file close of an id no open has: exit 3", rc == 3 and "not found" in out, out)
    rc, out = ctl("file", "close", "nonsense")
    check("file close with a bad id: exit 2", rc == 2, out)


def test_share_close():
    a = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    b = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    other = smb2user.logged_in(USER, PASSWORD, OTHER_SHARE)
    st, fid = a.create("held.txt", READ_WRITE, disposition=5, share=0)  # no sharing: blocks other opens
    check("client A holds held.txt without sharing", st == OK, name(st))
    rc, out = ctl("share", "close", rawsmb.SHARE)
    check("share close: exit 0, 2 tree connects disconnected", rc == 0 and "disconnected 2 tree connects" in out, out)
    st, _ = a.read_fid(fid, 1)
    check("client A's next request on the tree: NETWORK_NAME_DELETED", st == NETWORK_NAME_DELETED, name(st))
    st, _ = b.create("x.txt", READ_WRITE, disposition=5)
    check("client B's next request on the tree: NETWORK_NAME_DELETED", st == NETWORK_NAME_DELETED, name(st))
    st, f2 = other.create("other.txt", READ_WRITE, disposition=5)
    check("a tree connect to another share keeps working", st == OK, name(st))
    check("a new tree connect to the share works", b.tree_connect(rawsmb.SHARE) == OK)
    st, f3 = b.create("held.txt", READ_WRITE, disposition=1, share=0)
    check("... and opens held.txt (A's open was released)", st == OK, name(st))
    rc, out = ctl("share", "close", "no-such-share")
    check("share close of an unknown share: exit 3", rc == 3 and "not found" in out, out)
    rc, out = ctl("share", "close", rawsmb.SHARE.upper())
    check("share close in another case: exit 0, the one tree connect", rc == 0 and "disconnected 1 tree connect" in out,
          out)


def wait_until(condition, seconds=5.0):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def logged_in_as(client_guid):
    """A session and tree connect from the client CLIENT_GUID (a reconnect
    must come from the client that made the open)."""
    c = smb2user.UserConn()
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, client_guid, 0, 0, 0) + struct.pack("<H", 0x0210)
    check("NEGOTIATE", c.request(0, body)[0] == OK)
    check("login", c.login(USER, PASSWORD) == OK)
    check("tree connect", c.tree_connect(rawsmb.SHARE) == OK)
    return c


def test_disconnected():
    client = os.urandom(16)
    c = logged_in_as(client)
    key = os.urandom(16)
    st, o = leased_open(c, "kept.bin", key)
    check("CREATE kept.bin with an RWH lease and DHnQ", st == OK, name(st))
    if st != OK:
        return
    check("exclusive lock 0+10 on kept.bin", c.lock_fid(o.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK)
    fid_hex = "0x%016x" % struct.unpack_from("<Q", o.fid, 0)[0]
    j = open_of("kept.bin")
    check("while connected: status --json has it, not disconnected",
          j is not None and j["disconnected"] is False and j["kept_for_ms"] is None, str(j))
    c.abort()
    check("after the connection ends: status --json marks it disconnected",
          wait_until(lambda: (open_of("kept.bin") or {}).get("disconnected") is True))
    j = open_of("kept.bin") or {}
    check("... with the time left, its user, share and lock",
          0 < (j.get("kept_for_ms") or 0) and j.get("user") == USER and j.get("share") == rawsmb.SHARE and
          j.get("lock_count") == 1 and j.get("file_id") == fid_hex, str(j))
    rc, text = ctl("status", "--locks")
    rows = [l for l in text.splitlines() if l.strip().startswith(fid_hex)]
    check("status: listed under 'Disconnected durable opens: 1' with the time left, not as an open file",
          rc == 0 and "Disconnected durable opens: 1" in text and "Open files: 0" in text and
          any("kept.bin" in l and USER in l and re.search(r"\d+ s$", l) for l in rows), text)
    check("status --locks: the lock it still holds", any(re.search(r"exclusive\s+0\s+10$", l) for l in rows), text)
    rc, prom = ctl("status", "--prometheus")
    check("status --prometheus: ringsmb_disconnected_opens 1",
          re.search(r'^ringsmb_disconnected_opens\{share="%s",user="%s"\} 1$' % (rawsmb.SHARE, USER), prom, re.M),
          prom)
    d = logged_in_as(client)
    dhnc = rawsmb.create_contexts([(b"RqLs", key + struct.pack("<IIQ", RWH, 0, 0)), (b"DHnC", o.fid)])
    st, _ = d.create_ex("kept.bin", READ_WRITE, oplock=LEASE, contexts=dhnc)
    check("its client reconnects it (DHnC)", st == OK, name(st))
    check("... and it is an open file again", wait_until(lambda: (open_of("kept.bin") or {}).get("disconnected") is False))
    d.abort()
    check("kept again when that connection ends",
          wait_until(lambda: (open_of("kept.bin") or {}).get("disconnected") is True))
    rc, out = ctl("file", "close", fid_hex)
    check("file close ID of the disconnected open: exit 0", rc == 0 and "closed open file " + fid_hex in out, out)
    check("... gone from status", open_of("kept.bin") is None)
    e = logged_in_as(client)
    st, _ = e.create_ex("kept.bin", READ_WRITE, oplock=LEASE, contexts=dhnc)
    check("... and its reconnect gets OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    st, o2 = e.create_ex("kept.bin", READ_WRITE, disposition=1)
    check("... its lock gone with it", st == OK and e.lock_fid(o2.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK,
          name(st))


def test_disabled_session():
    # USER was logged in before the test disabled it (see test_admin_ops.sh).
    c = smb2user.logged_in(USER, PASSWORD, rawsmb.SHARE)
    rc, out = ctl("user", "disable", USER)
    check("user disable: exit 0", rc == 0, out)
    st, fid = c.create("after-disable.txt", READ_WRITE, disposition=5)
    check("the session from before keeps working", st == OK, name(st))
    d = smb2user.UserConn()
    d.negotiate()
    st = d.login(USER, PASSWORD)
    check("a new login with the right password: ACCOUNT_DISABLED", st == ACCOUNT_DISABLED, name(st))
    rc, out = ctl("user", "enable", USER)
    check("user enable: exit 0", rc == 0, out)


def main():
    tests = {"locks_leases": test_locks_leases, "file_close": test_file_close, "share_close": test_share_close,
             "disabled_session": test_disabled_session, "disconnected": test_disconnected}
    for t in sys.argv[7:]:
        tests[t]()
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
