#!/usr/bin/env python3
"""A deliberately minimal raw SMB2 client for hostile-input tests.

It speaks just enough SMB2 (NEGOTIATE 2.1, anonymous raw-NTLMSSP
SESSION_SETUP, TREE_CONNECT, CREATE, ECHO) to put malformed requests in
front of ringsmbd and check that each gets an error or a dropped
connection, and that the server keeps serving.

usage: rawsmb.py PORT SHARE
Prints 'N passed, N failed' last; exits non-zero on any failure.
"""
import os
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
SHARE = sys.argv[2]
results = {"pass": 0, "fail": 0}

STATUS = {
    0: "SUCCESS", 0xC0000016: "MORE_PROCESSING_REQUIRED", 0xC000000D: "INVALID_PARAMETER",
    0xC0000033: "OBJECT_NAME_INVALID", 0xC0000022: "ACCESS_DENIED", 0xC0000034: "OBJECT_NAME_NOT_FOUND",
    0xC000003A: "OBJECT_PATH_NOT_FOUND", 0xC000003B: "OBJECT_PATH_SYNTAX_BAD", 0xC00000BB: "NOT_SUPPORTED",
}


def check(name, ok, detail=""):
    results["pass" if ok else "fail"] += 1
    print(("PASS: " if ok else "FAIL: ") + name + (f" ({detail})" if detail and not ok else ""))


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        self.mid = 0
        self.session = 0
        self.tree = 0

    def send_frame(self, payload):
        self.s.sendall(struct.pack(">I", len(payload)) + payload)

    def recv_frame(self):
        hdr = self._exact(4)
        if hdr is None:
            return None
        n = struct.unpack(">I", hdr)[0] & 0xFFFFFF
        return self._exact(n)

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.s.recv(n - len(buf))
            except (ConnectionResetError, socket.timeout):
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    def header(self, cmd, credits=64, next_cmd=0, flags=0, charge=1):
        h = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, charge, 0, cmd, credits, flags, next_cmd,
                        self.mid, 0, self.tree, self.session, b"\0" * 16)
        self.mid += max(charge, 1)
        return h

    def request(self, cmd, body, **kw):
        self.send_frame(self.header(cmd, **kw) + body)
        r = self.recv_frame()
        if r is None:
            return None, None
        status = struct.unpack_from("<I", r, 8)[0]
        return status, r

    def negotiate(self, dialect=0x0210, client_guid=None):
        guid = client_guid or os.urandom(16)
        body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, guid, 0, 0, 0) + struct.pack("<H", dialect)
        return self.request(0, body)[0]

    def create_ex(self, name, access, share=7, disposition=1, options=0, oplock=0, contexts=b"", flags=0):
        """CREATE with create contexts (create_contexts() builds them); returns (status, Created or None)."""
        n = name.encode("utf-16-le") or b"\0"
        n += b"\0" * (-len(n) % 8)
        ctx_off = 64 + 56 + len(n) if contexts else 0
        body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, oplock, 2, 0, 0, access, 0, share, disposition, options,
                           64 + 56, len(name.encode("utf-16-le")), ctx_off, len(contexts)) + n + contexts
        st, r = self.request(5, body, flags=flags)
        return st, (Created(r) if st == 0 else None)

    def close_fid(self, fid):
        return self.request(6, struct.pack("<HHI", 24, 0, 0) + fid)[0]

    def write_fid(self, fid, data, offset=0):
        body = struct.pack("<HHIQ", 49, 64 + 48, len(data), offset) + fid + struct.pack("<IIHHI", 0, 0, 0, 0, 0) + data
        return self.request(9, body)[0]

    def read_fid(self, fid, length, offset=0):
        body = struct.pack("<HBBIQ", 49, 0, 0, length, offset) + fid + struct.pack("<IIIHHB", 0, 0, 0, 0, 0, 0)
        st, r = self.request(8, body)
        if st != 0:
            return st, b""
        off, ln = struct.unpack_from("<BxI", r, 64 + 2)
        return st, r[off:off + ln]

    def lock_fid(self, fid, offset, length, flags, sequence=0):
        body = struct.pack("<HHI", 48, 1, sequence) + fid + struct.pack("<QQII", offset, length, flags, 0)
        return self.request(10, body)[0]

    def write_frame(self, fid, offset, data):
        """A WRITE of DATA at OFFSET as one framed message, not sent (for pipelining)."""
        body = struct.pack("<HHIQ", 49, 64 + 48, len(data), offset) + fid + struct.pack("<IIHHI", 0, 0, 0, 0, 0)
        msg = self.header(9, charge=max(1, (len(data) + 65535) // 65536)) + body + data
        return struct.pack(">I", len(msg)) + msg

    def finals(self, count):
        """COUNT final responses (interim async STATUS_PENDING skipped): message id -> status;
        fewer when the connection ends first."""
        got = {}
        while len(got) < count:
            r = self.recv_frame()
            if r is None:
                return got
            status, _, flags, mid = fields(r)
            if status == 0x00000103 and flags & 0x2:
                continue
            got[mid] = status
        return got

    def abort(self):
        """Ends the TCP connection abruptly (RST), as a network failure would."""
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.s.close()

    def anonymous_session(self):
        neg = b"NTLMSSP\0" + struct.pack("<II", 1, 0x00000205 | 0x00080000) + b"\0" * 16
        st, r = self.request(1, self._setup_body(neg))
        if st != 0xC0000016:
            return st
        self.session = struct.unpack_from("<Q", r, 40)[0]
        # AUTHENTICATE with empty fields (anonymous): offsets all point at the end.
        empty_fields = struct.pack("<HHI", 0, 0, 72) * 6
        auth = b"NTLMSSP\0" + struct.pack("<I", 3) + empty_fields + struct.pack("<I", 0x00000A05) + b"\0" * 8
        return self.request(1, self._setup_body(auth))[0]

    def _setup_body(self, blob, previous_session=0):
        return struct.pack("<HBBIIHHQ", 25, 0, 1, 0, 0, 64 + 24, len(blob), previous_session) + blob

    def tree_connect(self, share):
        path = f"\\\\127.0.0.1\\{share}".encode("utf-16-le")
        st, r = self.request(3, struct.pack("<HHHH", 9, 0, 64 + 8, len(path)) + path)
        if st == 0:
            self.tree = struct.unpack_from("<I", r, 36)[0]
        return st

    def create_body(self, name_utf16, name_off=None, name_len=None, disposition=1, access=0x80):
        off = 64 + 56 if name_off is None else name_off
        ln = len(name_utf16) if name_len is None else name_len
        return struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, access, 0, 7, disposition, 0, off, ln, 0, 0) + (
            name_utf16 or b"\0")


def fields(r):
    """(status, command, flags, message id) of response R's SMB2 header."""
    return (struct.unpack_from("<I", r, 8)[0], struct.unpack_from("<H", r, 12)[0],
            struct.unpack_from("<I", r, 16)[0], struct.unpack_from("<Q", r, 24)[0])


def create_contexts(items):
    """The create-context chain (MS-SMB2 2.2.13.2) of [(name, data), ...]."""
    out = b""
    for i, (name, data) in enumerate(items):
        ctx = struct.pack("<IHHHHI", 0, 16, len(name), 0, 24 if data else 0, len(data)) + name
        ctx += b"\0" * (-len(ctx) % 8) + data
        if i < len(items) - 1:
            ctx += b"\0" * (-len(ctx) % 8)
            ctx = struct.pack("<I", len(ctx)) + ctx[4:]
        out += ctx
    return out


class Created:
    """The fields of a CREATE response a test looks at."""

    def __init__(self, r):
        self.oplock = r[64 + 2]
        self.action = struct.unpack_from("<I", r, 64 + 4)[0]
        self.fid = r[64 + 64:64 + 80]
        off, ln = struct.unpack_from("<II", r, 64 + 80)
        self.contexts = {}
        at = off
        while ln and at < len(r):
            nxt, noff, nlen, _, doff, dlen = struct.unpack_from("<IHHHHI", r, at)
            self.contexts[r[at + noff:at + noff + nlen]] = r[at + doff:at + doff + dlen]
            if not nxt:
                break
            at += nxt


def alive():
    c = Conn()
    ok = c.negotiate() == 0
    c.s.close()
    return ok


def dropped(c):
    try:
        c.s.settimeout(3)
        return c.recv_frame() is None
    except OSError:
        return True


def test_frames():
    for name, payload in [
        ("garbage frame", os.urandom(200)),
        ("truncated SMB2 header", b"\xfeSMB" + b"\0" * 20),
        ("SMB1 non-negotiate", b"\xffSMB" + b"\x25" + b"\0" * 40),
        ("transform header before negotiate", b"\xfdSMB" + b"\0" * 60),
    ]:
        c = Conn()
        c.send_frame(payload)
        check(f"{name}: connection dropped", dropped(c))
    c = Conn()
    c.s.sendall(struct.pack(">I", 0x00FFFFFF) + b"\xfeSMB")
    check("oversized frame length: dropped", dropped(c))
    c = Conn()
    c.s.sendall(b"\x85\0\0\0")  # NetBIOS keepalive-like type byte: not a session message
    check("non-session message: dropped", dropped(c))
    check("server still serves after bad frames", alive())


def query_info(c, fid, info_type, info_class, additional=0, flags=0, length=4096, input_buf=b""):
    """QUERY_INFO (MS-SMB2 2.2.37): (status, output buffer). The buffer comes
    with STATUS_BUFFER_OVERFLOW too, which carries a partial answer."""
    in_off = 64 + 40 if input_buf else 0
    body = struct.pack("<HBBIHHIII", 41, info_type, info_class, length, in_off, 0, len(input_buf), additional,
                       flags) + fid + input_buf
    st, r = c.request(16, body)
    if st not in (0, 0x80000005):
        return st, b""
    off, ln = struct.unpack_from("<HI", r, 64 + 2)
    return st, r[off:off + ln]


def send_slowly(c, data, piece):
    """Sends in pieces with pauses, so the server sees a large frame arrive
    over many receives (the rest of it goes straight into place)."""
    for off in range(0, len(data), piece):
        c.s.sendall(data[off:off + piece])
        time.sleep(0.002)


def test_large_frames():
    big = 1024 * 1024
    # Before login, frames are capped at 64 KiB: refused at the header.
    c = Conn()
    try:
        send_slowly(c, struct.pack(">I", big) + os.urandom(300 * 1024), 16 * 1024)
    except OSError:
        pass  # dropped while sending
    check("1 MiB frame before login (capped at 64 KiB until then): dropped", dropped(c))
    c = Conn()
    if c.negotiate() == 0:
        echo = c.header(13, charge=16) + struct.pack("<HH", 4, 0) + b"\0" * (big - 200)
        try:
            send_slowly(c, struct.pack(">I", len(echo)) + echo, 64 * 1024)
        except OSError:
            pass
        check("1 MiB ECHO after NEGOTIATE, before login: dropped", dropped(c))
    # After login, large frames arrive over many receives (the rest of each
    # goes straight into place).
    c = session_and_tree()
    if c:
        send_slowly(c, struct.pack(">I", big) + os.urandom(300 * 1024), 16 * 1024)
        c.s.close()
        check("1 MiB frame cut short by a close: server still serves", alive())
    c = session_and_tree()
    if c:
        send_slowly(c, struct.pack(">I", big) + os.urandom(big), 100 * 1024)
        check("1 MiB frame of garbage: dropped", dropped(c))
    c = session_and_tree()
    if c:
        echo = c.header(13, charge=16) + struct.pack("<HH", 4, 0) + b"\0" * (big - 200)
        send_slowly(c, struct.pack(">I", len(echo)) + echo, 7 * 1024 + 3)
        r = c.recv_frame()
        st = struct.unpack_from("<I", r, 8)[0] if r else None
        check("1 MiB ECHO sent in 7 KiB pieces: answered", r is not None, STATUS.get(st, hex(st or 0)))
    c = session_and_tree()
    if c:
        c.s.sendall(struct.pack(">I", big) + os.urandom(big // 2))
        c.s.sendall(b"\0" * (big // 2) + struct.pack(">I", 0x00FFFFFF))
        check("1 MiB frame followed by an oversized length: dropped", dropped(c))
    check("server still serves after the large frames", alive())


def test_negotiate():
    c = Conn()
    body = struct.pack("<HHHHI16sIHH", 36, 0xFFFF, 1, 0, 0, os.urandom(16), 0, 0, 0)
    st, _ = c.request(0, body)
    check("NEGOTIATE with DialectCount past the frame: error or drop", st is None or st == 0xC000000D,
          STATUS.get(st, hex(st or 0)))
    c = Conn()
    st, _ = c.request(0, struct.pack("<HH", 36, 1))
    check("NEGOTIATE body shorter than its StructureSize", st is None or st == 0xC000000D)
    c = Conn()
    st, _ = c.request(0, struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, os.urandom(16), 0, 0, 0) + b"\x99\x09")
    check("NEGOTIATE with only an unknown dialect: NOT_SUPPORTED", st == 0xC00000BB, hex(st or 0))


def session_and_tree():
    c = Conn()
    if c.negotiate() != 0:
        return None
    st = c.anonymous_session()
    if st != 0:
        check("anonymous session", False, hex(st or 0))
        return None
    st = c.tree_connect(SHARE)
    if st != 0:
        check("tree connect", False, hex(st or 0))
        return None
    return c


def connect(timeout=None):
    """session_and_tree() for a test that cannot go on without it: exits
    (status 1) when the login or tree connect fails; TIMEOUT, if given, for
    the socket's reads."""
    c = session_and_tree()
    if not c:
        sys.exit(1)
    if timeout is not None:
        c.s.settimeout(timeout)
    return c


def test_create():
    c = session_and_tree()
    if not c:
        return
    st, _ = c.request(5, c.create_body("..\\etc\\passwd".encode("utf-16-le")))
    check("CREATE '..\\etc\\passwd': OBJECT_PATH_SYNTAX_BAD", st == 0xC000003B, STATUS.get(st, hex(st or 0)))
    st, _ = c.request(5, c.create_body("a\\..\\..\\x".encode("utf-16-le")))
    check("CREATE 'a\\..\\..\\x': OBJECT_PATH_SYNTAX_BAD", st == 0xC000003B, STATUS.get(st, hex(st or 0)))
    st, _ = c.request(5, c.create_body("x".encode("utf-16-le"), name_off=60000, name_len=400))
    check("CREATE name offset outside the frame: INVALID_PARAMETER", st == 0xC000000D, STATUS.get(st, hex(st or 0)))
    st, _ = c.request(5, c.create_body("x".encode("utf-16-le"), name_len=3))
    check("CREATE odd name length: INVALID_PARAMETER", st == 0xC000000D, STATUS.get(st, hex(st or 0)))
    st, _ = c.request(5, c.create_body("/etc/passwd".encode("utf-16-le")))
    check("CREATE '/etc/passwd' refused", st is not None and st != 0, STATUS.get(st, hex(st or 0)))


def test_long_compound():
    c = Conn()
    if c.negotiate() != 0:
        return
    echo = struct.pack("<HH", 4, 0)
    n = 5000
    chain = b""
    for i in range(n):
        h = c.header(13, credits=1, next_cmd=0 if i == n - 1 else 72, flags=0)
        chain += h + echo + b"\0" * 4
    c.send_frame(chain)
    check("compound chain of 5000 ECHOs beyond the credits: dropped", dropped(c))
    check("server still serves after the long chain", alive())


def main():
    test_frames()
    test_large_frames()
    test_negotiate()
    test_create()
    test_long_compound()
    print(f"{results['pass']} passed, {results['fail']} failed")
    sys.exit(1 if results["fail"] else 0)


if __name__ == "__main__":
    main()
