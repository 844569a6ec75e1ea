#!/usr/bin/env python3
"""Hostile session binding with a raw SMB2 client: SESSION_SETUP with
SMB2_SESSION_FLAG_BINDING (MS-SMB2 3.3.5.5) naming a session of another
connection, from connections on any worker, each refused with its status
while the session itself keeps working.

usage: session_bind_probe.py PORT SHARE OWNER OWNER_PASS OTHER OTHER_PASS
  The owner logs in over SMB 3.0 (its signing key: AES-CMAC, derived from
  the NTLMv2 session key, MS-SMB2 3.3.5.5.3); then new connections try to
  bind to that session: signed with the right key (REQUEST_NOT_ACCEPTED:
  these connections do not offer SMB2_GLOBAL_CAP_MULTI_CHANNEL, so the
  server does not either; signed back with the session's key),
  with a wrong key or with the other user's own session key
  (ACCESS_DENIED, unsigned), unsigned (INVALID_PARAMETER), over SMB 2.1
  (REQUEST_NOT_ACCEPTED), over 3.0.2 (INVALID_PARAMETER), many times
  (more than the 32 channels a session may have); after a LOGOFF
  (USER_SESSION_DELETED). After each, the owner's session still opens a
  file.
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import hashlib
import hmac
import os
import struct
import sys

from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import algorithms

import rawsmb
import smb2user

SESSION_SETUP, LOGOFF = 1, 2
SMB2_FLAGS_SIGNED = 0x8
SMB2_SESSION_FLAG_BINDING = 0x1
SUCCESS = 0
ACCESS_DENIED = 0xC0000022
INVALID_PARAMETER = 0xC000000D
REQUEST_NOT_ACCEPTED = 0xC00000D0
USER_SESSION_DELETED = 0xC0000203
FILE_READ_ATTRIBUTES = 0x80
FILE_OPEN_IF = 3

smb2user.STATUS_NAMES.update({REQUEST_NOT_ACCEPTED: "REQUEST_NOT_ACCEPTED",
                              USER_SESSION_DELETED: "USER_SESSION_DELETED"})


def name(st):
    return smb2user.status_name(st)


def kdf(key, label, context):
    """SP800-108 counter mode with HMAC-SHA256, 128 bits (MS-SMB2 3.1.4.2)."""
    data = struct.pack(">I", 1) + label + b"\0" + context + struct.pack(">I", 128)
    return hmac.new(key, data, hashlib.sha256).digest()[:16]


def smb30_signing_key(session_key):
    return kdf(session_key, b"SMB2AESCMAC\0", b"SmbSign\0")


def aes_cmac(key, message):
    c = cmac.CMAC(algorithms.AES(key))
    c.update(message)
    return c.finalize()


def sign(message, key):
    m = bytearray(message)
    struct.pack_into("<I", m, 16, struct.unpack_from("<I", m, 16)[0] | SMB2_FLAGS_SIGNED)
    m[48:64] = b"\0" * 16
    m[48:64] = aes_cmac(key, bytes(m))
    return bytes(m)


def verifies(reply, key):
    if not reply or not struct.unpack_from("<I", reply, 16)[0] & SMB2_FLAGS_SIGNED:
        return False
    m = bytearray(reply)
    got = bytes(m[48:64])
    m[48:64] = b"\0" * 16
    return hmac.compare_digest(aes_cmac(key, bytes(m)), got)


def negotiated(dialect):
    c = smb2user.UserConn()
    st = c.negotiate(dialect)
    if st != SUCCESS:
        raise RuntimeError(f"negotiate 0x{dialect:04x}: {name(st)}")
    return c


def logged_in(user, password, share, dialect=0x0300):
    c = negotiated(dialect)
    st = c.login(user, password)
    if st != SUCCESS:
        raise RuntimeError(f"login {user}: {name(st)}")
    st = c.tree_connect(share)
    if st != SUCCESS:
        raise RuntimeError(f"tree connect {share}: {name(st)}")
    c.signing_key = smb30_signing_key(c.session_key)
    return c


def bind(session_id, key, dialect=0x0300, signed=True):
    """A binding SESSION_SETUP (an NTLMSSP NEGOTIATE) for SESSION_ID from a
    new connection; returns (status, reply)."""
    c = negotiated(dialect)
    c.session = session_id
    neg = b"NTLMSSP\0" + struct.pack("<II", 1, smb2user.NTLM_FLAGS) + b"\0" * 16
    body = struct.pack("<HBBIIHHQ", 25, SMB2_SESSION_FLAG_BINDING, 1, 0, 0, 64 + 24, len(neg), 0) + neg
    msg = c.header(SESSION_SETUP) + body
    c.send_frame(sign(msg, key) if signed else msg)
    r = c.recv_frame()
    c.s.close()
    return (None, None) if r is None else (struct.unpack_from("<I", r, 8)[0], r)


def intact(owner, what):
    st, fid = owner.create("bind-probe.txt", FILE_READ_ATTRIBUTES, disposition=FILE_OPEN_IF)
    ok = st == SUCCESS and owner.close(fid) == SUCCESS
    rawsmb.check(f"the owner's session still works after {what}", ok, name(st))


def expect(what, got, want):
    rawsmb.check(f"{what}: {name(want)}", got == want, f"got {name(got)}")


def main():
    _, _, share, owner_name, owner_pass, other_name, other_pass = sys.argv
    owner = logged_in(owner_name, owner_pass, share)
    key = owner.signing_key

    st, r = bind(owner.session, key)
    expect("a binding signed with the session's key", st, REQUEST_NOT_ACCEPTED)
    rawsmb.check("the refusal is signed with the session's key", verifies(r, key))
    intact(owner, "a binding signed with its key")

    st, r = bind(owner.session, os.urandom(16))
    expect("a binding signed with a wrong key", st, ACCESS_DENIED)
    rawsmb.check("a wrong-key refusal is not signed", r is not None and not verifies(r, key)
                 and not struct.unpack_from("<I", r, 16)[0] & SMB2_FLAGS_SIGNED)
    intact(owner, "a wrong-key binding")

    other = logged_in(other_name, other_pass, share)
    st, _ = bind(owner.session, other.signing_key)
    expect("another user binding to the owner's session with its own key", st, ACCESS_DENIED)
    intact(owner, "another user's binding")

    st, _ = bind(owner.session, key, signed=False)
    expect("an unsigned binding", st, INVALID_PARAMETER)
    st, _ = bind(owner.session, key, dialect=0x0210)
    expect("a binding over SMB 2.1", st, REQUEST_NOT_ACCEPTED)
    st, _ = bind(owner.session, key, dialect=0x0302)
    expect("a binding over another dialect (3.0.2)", st, INVALID_PARAMETER)
    intact(owner, "bindings over other dialects")

    refused = [bind(owner.session, key)[0] for _ in range(40)]
    rawsmb.check("40 bindings (past 32 channels) are all refused",
                 all(st == REQUEST_NOT_ACCEPTED for st in refused), str(sorted({name(s) for s in refused})))
    intact(owner, "40 bindings")

    st, _ = owner.request(LOGOFF, struct.pack("<HH", 4, 0))
    expect("the owner's LOGOFF", st, SUCCESS)
    st, _ = bind(owner.session, key)
    expect("a binding to a logged-off session", st, USER_SESSION_DELETED)
    st, _ = other.create("bind-probe.txt", FILE_READ_ATTRIBUTES, disposition=FILE_OPEN_IF)
    rawsmb.check("the other user's session is untouched", st == SUCCESS, name(st))

    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
