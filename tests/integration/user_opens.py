#!/usr/bin/env python3
"""Opens and leases belong to users (raw SMB2 clients, two ordinary users).

app_instance: an SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2 3.3.5.9.13) closes
  only the same user's earlier open, and only from a CREATE that passed
  its access check: another user's CREATE with the owner's AppInstanceId,
  refused or not, leaves the owner's open working; the owner's own CREATE
  from another client closes it (the check can fail).
lease_break: a lease break goes to a connection of the lease owner's
  user: not to an older connection with the owner's ClientGuid that only
  negotiated, nor to one whose session is another user's.
notify_memory: 200 watches of one connection on a busy directory hold at
  most 1 MiB of changes together; those past it answer NOTIFY_ENUM_DIR.
kept_fds: (under RLIMIT_NOFILE 256) as many kept durable opens as one user
  may hold leave room for 60 new connections.

usage: user_opens.py PORT SHARE SHARE_DIR OWNER%PASS OTHER%PASS TEST...
"""
import os
import struct
import sys
import time

import rawsmb
import smb2user
from rawsmb import check

SHARE_DIR = sys.argv[3]
OWNER, OWNER_PASS = sys.argv[4].split("%", 1)
OTHER, OTHER_PASS = sys.argv[5].split("%", 1)

OK, PENDING, ACCESS_DENIED, FILE_CLOSED = 0, 0x103, 0xC0000022, 0xC0000128
READ, WRITE = 0x1 | 0x80, 0x2 | 0x100
LEASE = 0xFF
R, H, W = 1, 2, 4
CREATE, OPLOCK_BREAK = 5, 0x12
APP_INSTANCE_ID = bytes([0x45, 0xBC, 0xA6, 0x6A, 0xEF, 0xA7, 0xF7, 0x4A, 0x90, 0x08, 0xFA, 0x46, 0x2E, 0x14, 0x4D,
                         0x74])
name = smb2user.status_name


def negotiated(dialect, client_guid):
    c = smb2user.UserConn()
    st = c.negotiate(dialect, client_guid)
    if st != OK:
        raise RuntimeError(f"negotiate: {name(st)}")
    return c


def login(user, password, dialect, client_guid):
    c = negotiated(dialect, client_guid)
    st = c.login(user, password)
    if st != OK:
        raise RuntimeError(f"login {user}: {name(st)}")
    st = c.tree_connect(rawsmb.SHARE)
    if st != OK:
        raise RuntimeError(f"tree connect: {name(st)}")
    return c


def final(c, mid, timeout):
    """The final response to request MID (interim STATUS_PENDING skipped), or None after TIMEOUT seconds."""
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            c.s.settimeout(max(0.05, deadline - time.time()))
            r = c.recv_frame()
            if r is None:
                return None
            status, _, flags, rmid = rawsmb.fields(r)
            if rmid == mid and not (status == PENDING and flags & 0x2):
                return r
        return None
    finally:
        c.s.settimeout(5)


def send_create(c, path, access, oplock=0, contexts=b""):
    """Sends a CREATE (share all, open or create); returns its MessageId."""
    n = path.encode("utf-16-le")
    n += b"\0" * (-len(n) % 8)
    ctx_off = 64 + 56 + len(n) if contexts else 0
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, oplock, 2, 0, 0, access, 0, 7, 3, 0, 64 + 56,
                       len(path.encode("utf-16-le")), ctx_off, len(contexts)) + n + contexts
    mid = c.mid
    c.send_frame(c.header(CREATE) + body)
    return mid


def create(c, path, access, oplock=0, contexts=b"", timeout=5):
    r = final(c, send_create(c, path, access, oplock, contexts), timeout)
    if r is None:
        return None, None
    st = rawsmb.fields(r)[0]
    return st, (rawsmb.Created(r) if st == OK else None)


def app_instance(app_id):
    return rawsmb.create_contexts([(APP_INSTANCE_ID, struct.pack("<HH", 20, 0) + app_id)])


def still_open(c, fid):
    st, _ = c.read_fid(fid, 16)
    return st, st == OK


def test_app_instance():
    app_id = os.urandom(16)
    owner = login(OWNER, OWNER_PASS, 0x0300, os.urandom(16))
    st, o = create(owner, "app.txt", READ | WRITE, contexts=app_instance(app_id))
    check("the owner opens app.txt with an AppInstanceId", st == OK, name(st))
    if st != OK:
        return
    owner.write_fid(o.fid, b"owner's data")
    path = os.path.join(SHARE_DIR, "app.txt")

    os.chmod(path, 0o600)  # the other user may not read it
    other = login(OTHER, OTHER_PASS, 0x0300, os.urandom(16))
    st, _ = create(other, "app.txt", READ, contexts=app_instance(app_id))
    check("another user's CREATE with that AppInstanceId, on a file it may not read: ACCESS_DENIED",
          st == ACCESS_DENIED, name(st))
    st, ok = still_open(owner, o.fid)
    check("... and the owner's open still works", ok, name(st))

    os.chmod(path, 0o644)  # now it may
    st, r = create(other, "app.txt", READ, contexts=app_instance(app_id))
    check("another user's CREATE with that AppInstanceId, allowed: SUCCESS", st == OK, name(st))
    st, ok = still_open(owner, o.fid)
    check("... and the owner's open still works (another user's open is never closed for it)", ok, name(st))
    if r:
        other.close_fid(r.fid)

    # The check itself: the owner's application, failed over to another
    # client, closes its earlier open.
    again = login(OWNER, OWNER_PASS, 0x0300, os.urandom(16))
    st, r = create(again, "app.txt", READ, contexts=app_instance(app_id))
    check("the owner's CREATE with that AppInstanceId from another client: SUCCESS", st == OK, name(st))
    st, _ = still_open(owner, o.fid)
    check("... and it closed the owner's earlier open (FILE_CLOSED)", st == FILE_CLOSED, name(st))


def lease_context(key, state):
    return rawsmb.create_contexts([(b"RqLs", key + struct.pack("<IIQ", state, 0, 0))])


def lease_break(c, key, seconds):
    """A lease break of KEY on C within SECONDS (acknowledged), as (from, to); None if none came."""
    c.s.settimeout(seconds)
    try:
        r = c.recv_frame()
    except OSError:
        r = None
    finally:
        c.s.settimeout(5)
    if r is None:
        return None
    _, cmd, _, mid = rawsmb.fields(r)
    if cmd != OPLOCK_BREAK or mid != 0xFFFFFFFFFFFFFFFF:
        return ("unexpected", cmd)
    _, got_key, cur, new = struct.unpack_from("<I16sII", r, 64 + 4)
    if got_key != key:
        return ("another key", got_key.hex())
    c.send_frame(c.header(OPLOCK_BREAK) + struct.pack("<HHI16sIQ", 36, 0, 0, key, new, 0))
    return cur, new


def nothing_arrives(c, seconds=0.5):
    c.s.settimeout(seconds)
    try:
        return c.recv_frame() is None
    except OSError:
        return True
    finally:
        c.s.settimeout(5)


def lease_break_case(what, file, intruder):
    """INTRUDER(guid) makes a connection with the owner's ClientGuid before
    the owner's; then another user's CREATE breaks the owner's lease."""
    guid, key = os.urandom(16), os.urandom(16)
    spy = intruder(guid)
    owner = login(OWNER, OWNER_PASS, 0x0210, guid)
    st, o = create(owner, file, READ | WRITE, oplock=LEASE, contexts=lease_context(key, R | W | H))
    check(f"{what}: the owner holds an RWH lease on {file}", st == OK and o.oplock == LEASE, name(st))
    if st != OK:
        return
    other = login(OTHER, OTHER_PASS, 0x0210, os.urandom(16))
    os.chmod(os.path.join(SHARE_DIR, file), 0o666)
    started = time.time()
    mid = send_create(other, file, READ | WRITE)
    got = lease_break(owner, key, 3)
    check(f"{what}: the break reaches the owner's connection", got == (R | W | H, R | H), str(got))
    check(f"{what}: the intruder's connection gets nothing", nothing_arrives(spy))
    r = final(other, mid, 6)
    st = rawsmb.fields(r)[0] if r else None
    check(f"{what}: the contending CREATE completes once the owner acknowledged (not after the break timeout)",
          st == OK and time.time() - started < 5, f"{name(st)} after {time.time() - started:.1f} s")


def test_lease_break():
    lease_break_case("an older connection that only negotiated with the owner's ClientGuid", "leased1.txt",
                     lambda guid: negotiated(0x0210, guid))
    lease_break_case("an older connection with the owner's ClientGuid and another user's session", "leased2.txt",
                     lambda guid: login(OTHER, OTHER_PASS, 0x0210, guid))


CHANGE_NOTIFY, NOTIFY_ENUM_DIR, ASYNC = 15, 0x10C, 0x2
FILE_NAME = 0x1
NOTIFY_BOUND = 1024 * 1024  # what one connection's watches may hold together


def send_notify(c, fid, length=65536):
    """CHANGE_NOTIFY on FID; returns its MessageId once the server answered it (interim or final)."""
    mid = c.mid
    c.send_frame(c.header(CHANGE_NOTIFY) + struct.pack("<HHI", 32, 0, length) + fid + struct.pack("<II", FILE_NAME, 0))
    r = c.recv_frame()
    status, _, flags, _ = rawsmb.fields(r)
    return mid, (None if status == PENDING and flags & ASYNC else r)


def notify_results(c, sent):
    """The final responses to SENT [(mid, final-or-None)]: a list of (status, bytes of changes)."""
    got = {mid: r for mid, r in sent if r is not None}
    c.s.settimeout(10)
    try:
        while len(got) < len(sent):
            r = c.recv_frame()
            if r is None:
                break
            got[rawsmb.fields(r)[3]] = r
    finally:
        c.s.settimeout(5)
    out = []
    for mid, _ in sent:
        r = got.get(mid)
        out.append((rawsmb.fields(r)[0], struct.unpack_from("<I", r, 64 + 4)[0]) if r else (None, 0))
    return out


def test_notify_memory():
    """200 watches of one connection on a busy directory: what they hold
    together stays within the connection's bound; the watches past it
    answer NOTIFY_ENUM_DIR."""
    os.mkdir(os.path.join(SHARE_DIR, "busy"))
    c = login(OWNER, OWNER_PASS, 0x0210, os.urandom(16))
    fids = []
    for _ in range(200):
        n = "busy".encode("utf-16-le")
        body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, READ, 0, 7, 1, 0x1, 64 + 56, len(n), 0, 0) + n
        st, r = c.request(CREATE, body)
        if st != OK:
            check("open the directory 200 times", False, name(st))
            return
        fids.append(r[64 + 64:64 + 80])
    sent = [send_notify(c, fid) for fid in fids]
    open(os.path.join(SHARE_DIR, "busy", "first"), "w").close()
    first = notify_results(c, sent)
    check("200 watches report the first change", all(st == OK for st, _ in first),
          str(sorted({name(st) for st, _ in first})))
    # 400 entries of 132 bytes: 53 KB held by each watch, under its own 64 KiB.
    for i in range(400):
        open(os.path.join(SHARE_DIR, "busy", f"{i:04d}-" + "x" * 55), "w").close()
    time.sleep(1.5)  # the server reads the changes at once; a little time for 80,000 of them
    results = notify_results(c, [send_notify(c, fid) for fid in fids])
    held = sum(n for st, n in results if st == OK)
    full = sum(1 for st, _ in results if st == OK)
    enum_dir = sum(1 for st, _ in results if st == NOTIFY_ENUM_DIR)
    print(f"    200 watches: {full} reported {held} bytes of changes, {enum_dir} NOTIFY_ENUM_DIR")
    check(f"the connection's watches held at most {NOTIFY_BOUND} bytes together ({held})", 0 < held <= NOTIFY_BOUND)
    check(f"the watches past the bound answered NOTIFY_ENUM_DIR ({enum_dir})", enum_dir > 0 and full + enum_dir == 200)
    c.s.close()


def test_kept_fds():
    """Durable opens kept after their connections ended, as many as one user
    may hold, under a descriptor limit of 256: new connections are still
    served (a kept open costs one descriptor and is counted for it)."""
    kept, conns = 0, []
    for k in range(4):
        c = login(OWNER, OWNER_PASS, 0x0210, os.urandom(16))
        conns.append(c)
        for i in range(40):
            st, o = create(c, f"kept{k}-{i}.txt", READ | WRITE, oplock=0x09,
                           contexts=rawsmb.create_contexts([(b"DHnQ", b"\0" * 16)]))
            if st != OK:
                break
            kept += b"DHnQ" in o.contexts
    for c in conns:
        c.abort()
    time.sleep(0.5)
    # One user may hold half of what the budget leaves clients: about 95
    # of 256 descriptors here, beside what the daemon holds itself.
    check(f"the owner's durable opens are kept after their connections end ({kept})", kept >= 80)
    answered, clients = 0, []
    for _ in range(60):
        try:
            c = rawsmb.Conn()
            clients.append(c)
            answered += c.negotiate() == OK
        except OSError:
            pass
    check(f"60 new connections beside them, each answered its NEGOTIATE ({answered})", answered == 60)
    for c in clients:
        c.s.close()


TESTS = {"kept_fds": test_kept_fds, "app_instance": test_app_instance, "lease_break": test_lease_break, "notify_memory": test_notify_memory}


def main():
    for t in sys.argv[6:]:
        TESTS[t]()
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
