#!/usr/bin/env python3
"""Durable handles seen from the wire (MS-SMB2 3.3.5.9.6-3.3.5.9.12, 3.3.7.1).

A durable open (DHnQ with a batch oplock; DH2Q with a lease) survives the
abrupt end of its TCP connection (an RST, as a network failure leaves it):
a new connection and session of the same user gets it back with DHnC /
DH2C, with its data and its byte-range lock. Another user is refused; a
kept open that nobody reconnects is closed when its timeout passes, as by
CLOSE (its delete-on-close happens then, not before). A resilient open
(FSCTL_LMR_REQUEST_RESILIENCY, 3.3.5.15.9) is kept the same way without
any oplock or lease, keeps its share mode while kept, and answers a
replayed LOCK (its LockSequence) without applying it twice.

usage: durable_handle.py PORT SHARE SHARE_DIR USER1%PASS1 USER2%PASS2
"""
import os
import struct
import sys
import time

import rawsmb
import smb2user
from rawsmb import check

SHARE_DIR = sys.argv[3]
USER1, PASS1 = sys.argv[4].split("%", 1)
USER2, PASS2 = sys.argv[5].split("%", 1)

OK, NOT_FOUND, ACCESS_DENIED, RANGE_NOT_LOCKED = 0, 0xC0000034, 0xC0000022, 0xC000007E
INVALID_PARAMETER, SHARING_VIOLATION, LOCK_NOT_GRANTED = 0xC000000D, 0xC0000043, 0xC0000055
FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4
BATCH, LEASE = 0x09, 0xFF
RWH = 0x7
EXCLUSIVE, UNLOCK, FAIL_IMMEDIATELY = 2, 4, 0x10
READ_WRITE_DELETE = 0x1 | 0x2 | 0x80 | 0x10000
DELETE_ON_CLOSE = 0x1000
name = smb2user.status_name


def login(user, password, dialect, client_guid, previous_session=0):
    c = smb2user.UserConn()
    if c.negotiate(dialect, client_guid) != 0:
        raise RuntimeError("negotiate failed")
    st = c.login(user, password, previous_session=previous_session)
    if st != 0:
        raise RuntimeError(f"login {user}: {name(st)}")
    st = c.tree_connect(rawsmb.SHARE)
    if st != 0:
        raise RuntimeError(f"tree connect: {name(st)}")
    return c


def dhnc(fid):
    return rawsmb.create_contexts([(b"DHnC", fid)])


def lease_context(key, state):
    return (b"RqLs", key + struct.pack("<IIQ", state, 0, 0))


def request_resiliency(c, fid, timeout_ms):
    """IOCTL FSCTL_LMR_REQUEST_RESILIENCY (NETWORK_RESILIENCY_REQUEST: Timeout, Reserved)."""
    data = struct.pack("<II", timeout_ms, 0)
    body = struct.pack("<HHI", 57, 0, FSCTL_LMR_REQUEST_RESILIENCY) + fid + struct.pack(
        "<IIIIIIII", 64 + 56, len(data), 0, 0, 0, 0, 1, 0) + data
    return c.request(11, body)[0]


def test_resilient_survives_a_cut_connection():
    guid = os.urandom(16)
    c = login(USER1, PASS1, 0x0210, guid)
    st, o = c.create_ex("resilient1.txt", READ_WRITE_DELETE, share=0, disposition=5)  # no oplock, no lease
    check("an open without oplock or lease", st == OK and o.oplock == 0, name(st))
    if st != OK:
        return
    st = request_resiliency(c, o.fid, 600000)
    check("a resiliency timeout above the maximum (300 s): INVALID_PARAMETER", st == INVALID_PARAMETER, name(st))
    st = request_resiliency(c, o.fid, 5000)
    check("FSCTL_LMR_REQUEST_RESILIENCY for 5 s", st == OK, name(st))
    check("WRITE on the resilient open", c.write_fid(o.fid, b"hello resilient") == OK)
    lock_sequence = (1 << 4) | 3  # LockSequenceIndex 1, LockSequenceNumber 3
    check("LOCK bytes 0-9 (sequence 1/3)", c.lock_fid(o.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY, lock_sequence) == OK)
    c.abort()
    time.sleep(0.3)

    other = login(USER2, PASS2, 0x0210, os.urandom(16))
    st, _ = other.create_ex("resilient1.txt", READ_WRITE_DELETE)
    check("kept after the cut: its share mode (none) still refuses others", st == SHARING_VIOLATION, name(st))

    c2 = login(USER1, PASS1, 0x0210, guid)
    st, r = c2.create_ex("resilient1.txt", READ_WRITE_DELETE, contexts=dhnc(o.fid))
    check("reconnected by DHnC on a new connection", st == OK and r.fid == o.fid, name(st))
    if st != OK:
        return
    st, data = c2.read_fid(r.fid, 100)
    check("the data written before the cut", st == OK and data == b"hello resilient", f"{name(st)} {data!r}")
    st = c2.lock_fid(r.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY, lock_sequence)
    check("the LOCK replayed with its sequence: SUCCESS, not applied twice", st == OK, name(st))
    st = c2.lock_fid(r.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY, lock_sequence + 1)
    check("another sequence number is applied: LOCK_NOT_GRANTED", st == LOCK_NOT_GRANTED, name(st))
    check("the lock survived: UNLOCK succeeds", c2.lock_fid(r.fid, 0, 10, UNLOCK) == OK)
    check("CLOSE of the reconnected open", c2.close_fid(r.fid) == OK)


def gone_within(path, seconds):
    """True once path is gone, polled for up to seconds (the deadline a fixed wait had)."""
    deadline = time.monotonic() + seconds
    while os.path.exists(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def test_resilient_times_out():
    c = login(USER1, PASS1, 0x0300, os.urandom(16))
    st, o = c.create_ex("resilient2.txt", READ_WRITE_DELETE, share=0, disposition=5, options=DELETE_ON_CLOSE)
    if st != OK or request_resiliency(c, o.fid, 1000) != OK:
        check("a resilient open for 1 s", False, name(st))
        return
    c.abort()
    path = os.path.join(SHARE_DIR, "resilient2.txt")
    time.sleep(0.3)
    check("kept after the cut: delete-on-close has not happened", os.path.exists(path))
    # Within the timeout and the owning worker's 1 s tick.
    check("closed when its timeout passed: delete-on-close happened", gone_within(path, 2.7))


def test_v1_survives_a_cut_connection():
    guid = os.urandom(16)
    c = login(USER1, PASS1, 0x0210, guid)
    st, o = c.create_ex("durable1.txt", READ_WRITE_DELETE, disposition=5, oplock=BATCH,
                        contexts=rawsmb.create_contexts([(b"DHnQ", b"\0" * 16)]))
    check("DHnQ with a batch oplock: granted", st == OK and o.oplock == BATCH and b"DHnQ" in o.contexts,
          name(st) if st else f"oplock {o.oplock} contexts {list(o.contexts)}")
    if st != OK:
        return
    check("WRITE on the durable open", c.write_fid(o.fid, b"hello durable") == OK)
    check("LOCK bytes 0-9", c.lock_fid(o.fid, 0, 10, EXCLUSIVE | FAIL_IMMEDIATELY) == OK)
    c.abort()
    time.sleep(0.3)

    other = login(USER2, PASS2, 0x0210, guid)
    st, _ = other.create_ex("durable1.txt", READ_WRITE_DELETE, oplock=BATCH, contexts=dhnc(o.fid))
    check("reconnect by another user: ACCESS_DENIED", st == ACCESS_DENIED, name(st))

    c2 = login(USER1, PASS1, 0x0210, guid)
    st, _ = c2.create_ex("durable1.txt", READ_WRITE_DELETE, oplock=BATCH, contexts=dhnc(b"\x77" * 16))
    check("reconnect of an unknown FileId: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    st, r = c2.create_ex("durable1.txt", READ_WRITE_DELETE, oplock=BATCH, contexts=dhnc(o.fid))
    check("reconnect by the same user on a new connection", st == OK, name(st))
    if st != OK:
        return
    check("the same FileId and the batch oplock", r.fid == o.fid and r.oplock == BATCH, f"oplock {r.oplock}")
    st, data = c2.read_fid(r.fid, 100)
    check("the data written before the cut", st == OK and data == b"hello durable", f"{name(st)} {data!r}")
    check("the lock survived: UNLOCK succeeds", c2.lock_fid(r.fid, 0, 10, UNLOCK) == OK)
    st = c2.lock_fid(r.fid, 0, 10, UNLOCK)
    check("...and a second UNLOCK finds none", st == RANGE_NOT_LOCKED, name(st))
    st, _ = c2.create_ex("durable1.txt", READ_WRITE_DELETE, oplock=BATCH, contexts=dhnc(o.fid))
    check("a reconnect of an open that is connected: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    check("CLOSE of the reconnected open", c2.close_fid(r.fid) == OK)


def test_v2_times_out():
    guid = os.urandom(16)
    c = login(USER1, PASS1, 0x0300, guid)
    create_guid = os.urandom(16)
    dh2q = (b"DH2Q", struct.pack("<II8s16s", 2000, 0, b"", create_guid))
    key = os.urandom(16)
    st, o = c.create_ex("durable2.txt", READ_WRITE_DELETE, disposition=5, options=DELETE_ON_CLOSE, oplock=LEASE,
                        contexts=rawsmb.create_contexts([lease_context(key, RWH), dh2q]))
    granted = st == OK and b"DH2Q" in o.contexts
    check("DH2Q with an RWH lease and a 2 s timeout: granted", granted,
          name(st) if st else f"contexts {list(o.contexts)}")
    if not granted:
        return
    timeout_ms = struct.unpack_from("<I", o.contexts[b"DH2Q"])[0]
    check("the response names the 2 s timeout", timeout_ms == 2000, str(timeout_ms))
    c.abort()
    path = os.path.join(SHARE_DIR, "durable2.txt")
    time.sleep(0.5)
    check("kept after the cut: delete-on-close has not happened", os.path.exists(path))
    # Within the timeout and the owning worker's 1 s tick.
    check("closed when its timeout passed: delete-on-close happened", gone_within(path, 3.5))
    c2 = login(USER1, PASS1, 0x0300, guid)
    dh2c = (b"DH2C", o.fid + create_guid + struct.pack("<I", 0))
    st, _ = c2.create_ex("durable2.txt", READ_WRITE_DELETE, oplock=LEASE,
                         contexts=rawsmb.create_contexts([lease_context(key, RWH), dh2c]))
    check("reconnect after the timeout: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))


def test_v2_lease_key_checked():
    guid = os.urandom(16)
    c = login(USER1, PASS1, 0x0300, guid)
    create_guid, key = os.urandom(16), os.urandom(16)
    dh2q = (b"DH2Q", struct.pack("<II8s16s", 0, 0, b"", create_guid))
    st, o = c.create_ex("durable3.txt", READ_WRITE_DELETE, disposition=5, oplock=LEASE,
                        contexts=rawsmb.create_contexts([lease_context(key, RWH), dh2q]))
    if st != OK or b"DH2Q" not in o.contexts:
        check("DH2Q with an RWH lease: granted", False, name(st))
        return
    c.abort()
    time.sleep(0.3)
    dh2c = (b"DH2C", o.fid + create_guid + struct.pack("<I", 0))
    c2 = login(USER1, PASS1, 0x0300, guid)
    st, _ = c2.create_ex("durable3.txt", READ_WRITE_DELETE, oplock=LEASE,
                         contexts=rawsmb.create_contexts([lease_context(os.urandom(16), RWH), dh2c]))
    check("reconnect with another lease key: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    c3 = login(USER1, PASS1, 0x0300, os.urandom(16))
    st, _ = c3.create_ex("durable3.txt", READ_WRITE_DELETE, oplock=LEASE,
                         contexts=rawsmb.create_contexts([lease_context(key, RWH), dh2c]))
    check("reconnect from another ClientGuid: OBJECT_NAME_NOT_FOUND", st == NOT_FOUND, name(st))
    st, r = c2.create_ex("durable3.txt", READ_WRITE_DELETE, oplock=LEASE,
                         contexts=rawsmb.create_contexts([lease_context(key, RWH), dh2c]))
    check("reconnect with the lease key and CreateGuid", st == OK and r.fid == o.fid, name(st))
    if st == OK:
        lease_state = struct.unpack_from("<I", r.contexts.get(b"RqLs", b"\0" * 20), 16)[0]
        check("the lease comes back with RWH", lease_state == RWH, hex(lease_state))


def test_session_reconnect():
    """PreviousSessionId (3.3.5.5.3): the old session ends, its durable open is kept for the new one."""
    guid = os.urandom(16)
    old = login(USER1, PASS1, 0x0210, guid)
    st, o = old.create_ex("durable4.txt", READ_WRITE_DELETE, disposition=5, oplock=BATCH,
                          contexts=rawsmb.create_contexts([(b"DHnQ", b"\0" * 16)]))
    if st != OK or b"DHnQ" not in o.contexts:
        check("DHnQ with a batch oplock: granted", False, name(st))
        return
    check("WRITE before the session reconnect", old.write_fid(o.fid, b"kept across sessions") == OK)
    new = login(USER1, PASS1, 0x0210, guid, previous_session=old.session)
    st = old.write_fid(o.fid, b"x")
    check("the old session is gone: USER_SESSION_DELETED", st == 0xC0000203, name(st))
    st, r = new.create_ex("durable4.txt", READ_WRITE_DELETE, oplock=BATCH, contexts=dhnc(o.fid))
    check("its durable open reconnects on the new session", st == OK, name(st))
    if st == OK:
        st, data = new.read_fid(r.fid, 100)
        check("...with its data", data == b"kept across sessions", f"{name(st)} {data!r}")
        new.close_fid(r.fid)


def main():
    test_v1_survives_a_cut_connection()
    test_session_reconnect()
    test_v2_times_out()
    test_v2_lease_key_checked()
    test_resilient_survives_a_cut_connection()
    test_resilient_times_out()
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
