#!/usr/bin/python3
"""Raw Kerberos SESSION_SETUPs against ringsmbd (test_kerberos.sh).

Makes AP-REQs with GSSAPI (python3-gssapi, the ticket cache in KRB5CCNAME)
and sends them in SPNEGO over a minimal SMB2 client, to check what a real
client cannot be made to send: the AP-REP the server returns completes the
client's context (mutual authentication), a replayed token, a truncated one
and a ticket for a service that is not SMB are refused with LOGON_FAILURE,
and the server keeps serving. (Samba 4.17's standalone server, the same
way: accepts the replay and the HTTP/ ticket, and answers the truncated
AP-REQs with MORE_PROCESSING_REQUIRED.)

usage: krb5_probe.py PORT HOST [--stale SECONDS]
  HOST: the cifs/HOST the keytab holds. --stale: only make a token, wait
  SECONDS (past the ticket's end and the clock skew) and send it: refused.
"""
import os
import socket
import struct
import sys

import gssapi

PORT = int(sys.argv[1])
HOST = sys.argv[2]
SUCCESS, LOGON_FAILURE = 0, 0xC000006D
results = {"pass": 0, "fail": 0}

KRB5_OID = bytes.fromhex("2a864886f712010202")
SPNEGO_OID = bytes.fromhex("2b0601050502")


def check(name, ok, detail=""):
    results["pass" if ok else "fail"] += 1
    print(("PASS: " if ok else "FAIL: ") + name + (f" ({detail})" if detail and not ok else ""))


def tlv(tag, value):
    n = len(value)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + value


def neg_token_init(token):
    mech_types = tlv(0xA0, tlv(0x30, tlv(0x06, KRB5_OID)))
    body = tlv(0xA0, tlv(0x30, mech_types + tlv(0xA2, tlv(0x04, token))))
    return tlv(0x60, tlv(0x06, SPNEGO_OID) + body)


def read_tlv(data, pos):
    tag, first = data[pos], data[pos + 1]
    pos += 2
    n = first
    if first & 0x80:
        k = first & 0x7F
        n = int.from_bytes(data[pos:pos + k], "big")
        pos += k
    return tag, data[pos:pos + n], pos + n


def response_token(blob):
    """The responseToken [2] of a NegTokenResp [1] SEQUENCE."""
    _, seq, _ = read_tlv(blob, 0)
    _, fields, _ = read_tlv(seq, 0)
    pos = 0
    while pos < len(fields):
        tag, value, pos = read_tlv(fields, pos)
        if tag == 0xA2:
            return read_tlv(value, 0)[1]
    return b""


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        self.mid = 0

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def request(self, cmd, body):
        h = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 1, 0, cmd, 64, 0, 0, self.mid, 0, 0, 0, b"\0" * 16)
        self.mid += 1
        payload = h + body
        self.s.sendall(struct.pack(">I", len(payload)) + payload)
        hdr = self._exact(4)
        r = self._exact(struct.unpack(">I", hdr)[0] & 0xFFFFFF) if hdr else None
        return (None, None) if r is None else (struct.unpack_from("<I", r, 8)[0], r)

    def negotiate(self):
        body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, os.urandom(16), 0, 0, 0) + struct.pack("<H", 0x0210)
        return self.request(0, body)[0]

    def session_setup(self, blob):
        body = struct.pack("<HBBIIHHQ", 25, 0, 1, 0, 0, 64 + 24, len(blob), 0) + blob
        status, r = self.request(1, body)
        if r is None:
            return None, b""
        off, length = struct.unpack_from("<HH", r, 64 + 4)
        return status, r[off:off + length]


def token_for(service):
    name = gssapi.Name(f"{service}@{HOST}", gssapi.NameType.hostbased_service)
    flags = [gssapi.RequirementFlag.mutual_authentication]
    ctx = gssapi.SecurityContext(name=name, usage="initiate", flags=flags, mech=gssapi.MechType.kerberos)
    return ctx, ctx.step()


def setup(blob):
    c = Conn()
    if c.negotiate() != SUCCESS:
        return None, b""
    return c.session_setup(neg_token_init(blob) if blob is not None else b"")


def stale(seconds):
    import time
    _, token = token_for("cifs")
    time.sleep(seconds)
    status, _ = setup(token)
    check(f"a token {seconds} s old, of an expired ticket: LOGON_FAILURE", status == LOGON_FAILURE, hex(status or 0))


def main():
    if len(sys.argv) > 4 and sys.argv[3] == "--stale":
        stale(int(sys.argv[4]))
        print(f"{results['pass']} passed, {results['fail']} failed")
        sys.exit(1 if results["fail"] else 0)
    ctx, token = token_for("cifs")
    status, blob = setup(token)
    check("a fresh AP-REQ logs in", status == SUCCESS, hex(status or 0))
    try:
        ctx.step(response_token(blob))
        check("the AP-REP completes the client's context (mutual authentication)", ctx.complete)
    except gssapi.exceptions.GSSError as e:
        check("the AP-REP completes the client's context (mutual authentication)", False, str(e))
    status, _ = setup(token)
    check("the same AP-REQ again is a replay: LOGON_FAILURE", status == LOGON_FAILURE, hex(status or 0))
    _, token = token_for("cifs")
    for cut in (len(token) // 2, 20, 3):
        status, _ = setup(token[:cut])
        check(f"an AP-REQ cut to {cut} bytes: LOGON_FAILURE", status == LOGON_FAILURE, hex(status or 0))
    garbage = tlv(0x60, tlv(0x06, KRB5_OID) + b"\x01\x00" + os.urandom(200))
    status, _ = setup(garbage)
    check("random bytes in krb5 framing: LOGON_FAILURE", status == LOGON_FAILURE, hex(status or 0))
    _, token = token_for("HTTP")
    status, _ = setup(token)
    check("a ticket for HTTP/ (its key is in the keytab): LOGON_FAILURE", status == LOGON_FAILURE, hex(status or 0))
    _, token = token_for("cifs")
    status, _ = setup(token)
    check("the server still logs in a good token", status == SUCCESS, hex(status or 0))
    print(f"{results['pass']} passed, {results['fail']} failed")
    sys.exit(1 if results["fail"] else 0)


main()
