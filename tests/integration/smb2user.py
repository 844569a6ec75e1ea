"""A logged-in raw SMB2 client for access tests: rawsmb.Conn plus an NTLMv2
login (raw NTLMSSP, no signing, no key exchange) and the few file requests
the tests send with exactly the fields they choose (DesiredAccess,
CreateOptions, info classes) where smbclient picks its own.

MD4 is written out here: OpenSSL 3 no longer offers it to Python.
"""
import hashlib
import hmac
import os
import struct
import time

import rawsmb

STATUS_NAMES = dict(rawsmb.STATUS)
STATUS_NAMES.update({0xC0000043: "SHARING_VIOLATION", 0xC0000121: "CANNOT_DELETE", 0xC000006D: "LOGON_FAILURE",
                     0xC0000101: "DIRECTORY_NOT_EMPTY", 0xC0000035: "OBJECT_NAME_COLLISION"})


def status_name(st):
    return "NO_RESPONSE" if st is None else STATUS_NAMES.get(st, hex(st))


def _md4(data):
    def f(x, y, z): return (x & y) | (~x & z)
    def g(x, y, z): return (x & y) | (x & z) | (y & z)
    def h(x, y, z): return x ^ y ^ z
    def rotl(v, s): v &= 0xFFFFFFFF; return ((v << s) | (v >> (32 - s))) & 0xFFFFFFFF
    msg = data + b"\x80" + b"\0" * ((55 - len(data)) % 64) + struct.pack("<Q", len(data) * 8)
    a, b, c, d = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
    for off in range(0, len(msg), 64):
        x = struct.unpack("<16I", msg[off:off + 64])
        aa, bb, cc, dd = a, b, c, d
        for i in range(16):
            k, s = i, (3, 7, 11, 19)[i % 4]
            if i % 4 == 0: a = rotl(a + f(b, c, d) + x[k], s)
            elif i % 4 == 1: d = rotl(d + f(a, b, c) + x[k], s)
            elif i % 4 == 2: c = rotl(c + f(d, a, b) + x[k], s)
            else: b = rotl(b + f(c, d, a) + x[k], s)
        for i in range(16):
            k, s = (i % 4) * 4 + i // 4, (3, 5, 9, 13)[i % 4]
            if i % 4 == 0: a = rotl(a + g(b, c, d) + x[k] + 0x5A827999, s)
            elif i % 4 == 1: d = rotl(d + g(a, b, c) + x[k] + 0x5A827999, s)
            elif i % 4 == 2: c = rotl(c + g(d, a, b) + x[k] + 0x5A827999, s)
            else: b = rotl(b + g(c, d, a) + x[k] + 0x5A827999, s)
        order = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)
        for i in range(16):
            k, s = order[i], (3, 9, 11, 15)[i % 4]
            if i % 4 == 0: a = rotl(a + h(b, c, d) + x[k] + 0x6ED9EBA1, s)
            elif i % 4 == 1: d = rotl(d + h(a, b, c) + x[k] + 0x6ED9EBA1, s)
            elif i % 4 == 2: c = rotl(c + h(d, a, b) + x[k] + 0x6ED9EBA1, s)
            else: b = rotl(b + h(c, d, a) + x[k] + 0x6ED9EBA1, s)
        a, b, c, d = [(v + w) & 0xFFFFFFFF for v, w in ((a, aa), (b, bb), (c, cc), (d, dd))]
    return struct.pack("<4I", a, b, c, d)


assert _md4(b"abc").hex() == "a448017aaf21d8525fc10ae87aa6729d"  # RFC 1320 test suite

NTLM_FLAGS = 0x00000001 | 0x00000004 | 0x00000200 | 0x00008000 | 0x00080000 | 0x00800000 | 0x20000000 | 0x80000000


def _ntowf_v2(user, password, domain):
    nt_hash = _md4(password.encode("utf-16-le"))
    return hmac.new(nt_hash, (user.upper() + domain).encode("utf-16-le"), hashlib.md5).digest()


def _ntlmv2_response(user, password, domain, server_challenge, target_info):
    ntowf = _ntowf_v2(user, password, domain)
    filetime = int((time.time() + 11644473600) * 10_000_000)
    temp = b"\x01\x01" + b"\0" * 6 + struct.pack("<Q", filetime) + os.urandom(8) + b"\0" * 4 + target_info + b"\0" * 4
    proof = hmac.new(ntowf, server_challenge + temp, hashlib.md5).digest()
    return proof + temp


class UserConn(rawsmb.Conn):
    def login(self, user, password, domain="", previous_session=0):
        neg = b"NTLMSSP\0" + struct.pack("<II", 1, NTLM_FLAGS) + b"\0" * 16
        st, r = self.request(1, self._setup_body(neg))
        if st != 0xC0000016:
            return st
        self.session = struct.unpack_from("<Q", r, 40)[0]
        blob_off, blob_len = struct.unpack_from("<HH", r, 64 + 4)
        chal = r[blob_off:blob_off + blob_len]
        server_challenge = chal[24:32]
        ti_len, _, ti_off = struct.unpack_from("<HHI", chal, 40)
        target_info = chal[ti_off:ti_off + ti_len]
        nt = _ntlmv2_response(user, password, domain, server_challenge, target_info)
        # NTLMv2's SessionBaseKey; without NTLMSSP_NEGOTIATE_KEY_EXCH it is the session key.
        self.session_key = hmac.new(_ntowf_v2(user, password, domain), nt[:16], hashlib.md5).digest()
        fields = [b"\0" * 24, nt, domain.encode("utf-16-le"), user.encode("utf-16-le"), "WS".encode("utf-16-le"), b""]
        off = 64
        head, payload = b"", b""
        for f in fields:
            head += struct.pack("<HHI", len(f), len(f), off + len(payload))
            payload += f
        auth = b"NTLMSSP\0" + struct.pack("<I", 3) + head + struct.pack("<I", NTLM_FLAGS) + payload
        return self.request(1, self._setup_body(auth, previous_session))[0]

    def create(self, name, access, options=0, disposition=1, share=7):
        n = name.encode("utf-16-le")
        body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, access, 0, share, disposition, options, 64 + 56,
                           len(n), 0, 0) + (n or b"\0")
        st, r = self.request(5, body)
        fid = r[64 + 64:64 + 80] if st == 0 else None
        return st, fid

    def close(self, fid):
        return self.request(6, struct.pack("<HHI", 24, 0, 0) + fid)[0]

    def set_info(self, fid, info_class, buf, info_type=1):
        body = struct.pack("<HBBIHHI", 33, info_type, info_class, len(buf), 64 + 32, 0, 0) + fid + buf
        return self.request(17, body)[0]

    def write(self, fid, data, offset=0):
        body = struct.pack("<HHIQ", 49, 64 + 48, len(data), offset) + fid + struct.pack("<IIHHI", 0, 0, 0, 0, 0) + data
        return self.request(9, body)[0]


def logged_in(user, password, share, dialect=0x0210):
    c = UserConn()
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, os.urandom(16), 0, 0, 0) + struct.pack("<H", dialect)
    st = c.request(0, body)[0]
    if st != 0:
        raise RuntimeError(f"negotiate: {status_name(st)}")
    st = c.login(user, password)
    if st != 0:
        raise RuntimeError(f"login {user}: {status_name(st)}")
    st = c.tree_connect(share)
    if st != 0:
        raise RuntimeError(f"tree connect {share}: {status_name(st)}")
    return c
