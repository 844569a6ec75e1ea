#!/usr/bin/env python3
"""Session binding that succeeds (MS-SMB2 3.3.5.5): a raw SMB 3.0 client
binds new connections to its session and uses one open through all of
them.

usage: multichannel_probe.py PORT SHARE OWNER OWNER_PASS OTHER OTHER_PASS
  The owner logs in on a first connection and writes a file; a second
  connection binds (NTLMSSP, both legs signed with Session.SigningKey; the
  final response signed with the channel's key, derived from the binding's
  own session key) and reads and writes the same FileId; the first
  connection ends and the second goes on with the session and its open; a
  binding that authenticates as another user is refused (ACCESS_DENIED);
  a connection already bound to one session binds to a second session of
  its client (smb2.session.bind2), and one of another ClientGuid binds
  too; a session takes 32 channels and refuses the 33rd
  (INSUFFICIENT_RESOURCES); a LOGOFF on one channel ends the session on
  all.
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import hashlib
import hmac
import os
import struct
import sys
import time

import rawsmb
import smb2user
from session_bind_probe import aes_cmac, smb30_signing_key, verifies

SESSION_SETUP, LOGOFF, READ = 1, 2, 8
SMB2_FLAGS_SIGNED = 0x8
SMB2_SESSION_FLAG_BINDING = 0x1
SMB2_GLOBAL_CAP_MULTI_CHANNEL = 0x8
SUCCESS = 0
MORE_PROCESSING_REQUIRED = 0xC0000016
ACCESS_DENIED = 0xC0000022
INSUFFICIENT_RESOURCES = 0xC000009A
USER_SESSION_DELETED = 0xC0000203
GENERIC_RW = 0x80000000 | 0x40000000
FILE_OVERWRITE_IF = 5
CLIENT_GUID = os.urandom(16)

smb2user.STATUS_NAMES.update({USER_SESSION_DELETED: "USER_SESSION_DELETED",
                              INSUFFICIENT_RESOURCES: "INSUFFICIENT_RESOURCES"})


def name(st):
    return "no answer" if st is None else smb2user.status_name(st)


def sign(message, key):
    m = bytearray(message)
    struct.pack_into("<I", m, 16, struct.unpack_from("<I", m, 16)[0] | SMB2_FLAGS_SIGNED)
    m[48:64] = b"\0" * 16
    m[48:64] = aes_cmac(key, bytes(m))
    return bytes(m)


def connection(client_guid=CLIENT_GUID):
    """A new connection that negotiated SMB 3.0 offering multichannel, as one client (one ClientGuid)."""
    c = smb2user.UserConn()
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, SMB2_GLOBAL_CAP_MULTI_CHANNEL, client_guid, 0, 0, 0)
    st, r = c.request(0, body + struct.pack("<H", 0x0300))
    if st != SUCCESS:
        raise RuntimeError(f"negotiate: {name(st)}")
    c.offered_multichannel = bool(struct.unpack_from("<I", r, 64 + 24)[0] & SMB2_GLOBAL_CAP_MULTI_CHANNEL)
    return c


def signed_setup(c, blob, key):
    body = struct.pack("<HBBIIHHQ", 25, SMB2_SESSION_FLAG_BINDING, 1, 0, 0, 64 + 24, len(blob), 0) + blob
    c.send_frame(sign(c.header(SESSION_SETUP) + body, key))
    r = c.recv_frame()
    return (None, None) if r is None else (struct.unpack_from("<I", r, 8)[0], r)


def bind(c, owner, user, password):
    """Binds connection C to OWNER's session, authenticating as USER; returns the final status."""
    c.session, c.tree = owner.session, owner.tree
    neg = b"NTLMSSP\0" + struct.pack("<II", 1, smb2user.NTLM_FLAGS) + b"\0" * 16
    st, r = signed_setup(c, neg, owner.signing_key)
    if st != MORE_PROCESSING_REQUIRED:
        return st
    blob_off, blob_len = struct.unpack_from("<HH", r, 64 + 4)
    chal = r[blob_off:blob_off + blob_len]
    ti_len, _, ti_off = struct.unpack_from("<HHI", chal, 40)
    nt = smb2user._ntlmv2_response(user, password, "", chal[24:32], chal[ti_off:ti_off + ti_len])
    session_key = hmac.new(smb2user._ntowf_v2(user, password, ""), nt[:16], hashlib.md5).digest()
    fields = [b"\0" * 24, nt, b"", user.encode("utf-16-le"), "WS".encode("utf-16-le"), b""]
    head, payload = b"", b""
    for f in fields:
        head += struct.pack("<HHI", len(f), len(f), 64 + len(payload))
        payload += f
    auth = b"NTLMSSP\0" + struct.pack("<I", 3) + head + struct.pack("<I", smb2user.NTLM_FLAGS) + payload
    st, r = signed_setup(c, auth, owner.signing_key)
    c.channel_key = smb30_signing_key(session_key)
    c.final_signed_with_channel_key = st == SUCCESS and verifies(r, c.channel_key)
    return st


def read(c, fid, length, offset=0):
    st, data = c.read_fid(fid, length, offset)
    return data if st == SUCCESS else f"<{name(st)}>"


def owner_login(user, password, share, client_guid=CLIENT_GUID):
    c = connection(client_guid)
    st = c.login(user, password)
    if st != SUCCESS or c.tree_connect(share) != SUCCESS:
        raise RuntimeError(f"login {user}: {name(st)}")
    c.signing_key = smb30_signing_key(c.session_key)
    return c


def two_channels_one_open(owner, user, password):
    rawsmb.check("SMB2_GLOBAL_CAP_MULTI_CHANNEL offered", owner.offered_multichannel)
    st, created = owner.create_ex("mc-probe.txt", GENERIC_RW, disposition=FILE_OVERWRITE_IF)
    fid = created.fid if created else None
    rawsmb.check("CREATE on the first channel", st == SUCCESS, name(st))
    rawsmb.check("WRITE on the first channel", owner.write_fid(fid, b"hello") == SUCCESS)
    second = connection()
    st = bind(second, owner, user, password)
    rawsmb.check("a second connection binds to the session", st == SUCCESS, name(st))
    rawsmb.check("the binding's final response is signed with the channel's key",
                 second.final_signed_with_channel_key)
    got = read(second, fid, 5)
    rawsmb.check("the second channel reads the first channel's open", got == b"hello", repr(got))
    rawsmb.check("the second channel writes through it", second.write_fid(fid, b"world", 5) == SUCCESS)
    got = read(owner, fid, 10)
    rawsmb.check("the first channel reads what the second wrote", got == b"helloworld", repr(got))
    return second, fid


def survives_first_channel(owner, second, fid):
    owner.abort()
    time.sleep(0.3)
    got = read(second, fid, 10)
    rawsmb.check("after the first connection is gone, the open works on the second", got == b"helloworld",
                 repr(got))
    st, created = second.create_ex("mc-probe-2.txt", GENERIC_RW, disposition=FILE_OVERWRITE_IF)
    rawsmb.check("... and the session opens files there", st == SUCCESS, name(st))
    if created:
        second.close_fid(created.fid)


def channel_limit(owner, user, password):
    channels = [connection() for _ in range(31)]
    statuses = [bind(c, owner, user, password) for c in channels]
    rawsmb.check("31 more channels bind (32 in all)", all(st == SUCCESS for st in statuses),
                 str(sorted({name(s) for s in statuses})))
    extra = connection()
    st = bind(extra, owner, user, password)
    rawsmb.check("the 33rd channel is refused: INSUFFICIENT_RESOURCES", st == INSUFFICIENT_RESOURCES, name(st))
    return channels


def one_channel_two_sessions(user, password, share, rounds=8):
    """smb2.session.bind2's shape: two connections of one client log in to a
    session each, and a third binds to both. With two workers the first two
    land on different workers about every second time; the third, already a
    channel of the first session, must still bind to the second."""
    statuses = set()
    for _ in range(rounds):
        guid = os.urandom(16)
        first, second = owner_login(user, password, share, guid), owner_login(user, password, share, guid)
        third = connection(guid)
        statuses.add((bind(third, first, user, password), bind(third, second, user, password)))
        for c in (first, second, third):
            c.abort()
    rawsmb.check(f"a channel of one session binds to a second session of its client ({rounds} rounds)",
                 statuses == {(SUCCESS, SUCCESS)}, str(sorted((name(a), name(b)) for a, b in statuses)))


def other_client_guid_binds(owner, user, password, rounds=4):
    """A connection with a ClientGuid of its own binds too: it moves to the
    session's worker when it binds, not when it negotiates."""
    statuses = set()
    for _ in range(rounds):
        c = connection(os.urandom(16))
        statuses.add(bind(c, owner, user, password))
        c.abort()
    rawsmb.check(f"a connection of another ClientGuid binds ({rounds} rounds)", statuses == {SUCCESS},
                 str(sorted(name(s) for s in statuses)))


def main():
    _, _, share, owner_name, owner_pass, other_name, other_pass = sys.argv
    owner = owner_login(owner_name, owner_pass, share)
    second, fid = two_channels_one_open(owner, owner_name, owner_pass)
    survives_first_channel(owner, second, fid)
    one_channel_two_sessions(owner_name, owner_pass, share)
    other_client_guid_binds(owner_login(owner_name, owner_pass, share), owner_name, owner_pass)

    owner = owner_login(owner_name, owner_pass, share)
    st = bind(connection(), owner, other_name, other_pass)
    rawsmb.check("a binding that authenticates as another user: ACCESS_DENIED", st == ACCESS_DENIED, name(st))
    channels = channel_limit(owner, owner_name, owner_pass)
    st, _ = channels[5].request(LOGOFF, struct.pack("<HH", 4, 0))
    rawsmb.check("LOGOFF on a bound channel", st == SUCCESS, name(st))
    st, _ = owner.create_ex("mc-probe.txt", GENERIC_RW)
    rawsmb.check("... ends the session on the first channel too", st == USER_SESSION_DELETED, name(st))
    st, _ = channels[9].create_ex("mc-probe.txt", GENERIC_RW)
    rawsmb.check("... and on the others", st == USER_SESSION_DELETED, name(st))

    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
