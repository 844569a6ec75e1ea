#!/usr/bin/python3
"""impacket (Debian's python3-impacket, 0.10) against ringsmbd, one dialect
at a time: list the shares, put and get back 200 KB, make a directory,
rename into it, list it, delete. Then the refusals an admin must be able to
read in the log: an NTLMv1 login (impacket's USE_NTLMv2 = False), and an
SMB 2.1 session at a share that requires encryption.

usage: impacket_client.py PORT SHARE USER PASSWORD [ENCRYPTED_SHARE]
Runs with Debian's /usr/bin/python3, where python3-impacket lives.
"""
import functools
import io
import os
import sys

from impacket import ntlm, smb3, smb3structs
from impacket.smbconnection import SessionError, SMBConnection

PORT, SHARE, USER, PASSWORD = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ENCRYPTED_SHARE = sys.argv[5] if len(sys.argv) > 5 else None
DIALECTS = {"2.0.2": smb3structs.SMB2_DIALECT_002, "2.1": smb3structs.SMB2_DIALECT_21,
            "3.0": smb3structs.SMB2_DIALECT_30, "3.0.2": smb3structs.SMB2_DIALECT_302}
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += 0 if ok else 1
    print(("PASS: " if ok else "FAIL: ") + name + (f" ({detail})" if detail and not ok else ""))


def connect(dialect):
    # SMBConnection takes no 3.0.2 of its own ("Unknown dialect"); impacket's
    # SMB3 class negotiates any one dialect it is given, and SMBConnection
    # wraps it as an existing connection.
    smb = smb3.SMB3("RINGSMB", "127.0.0.1", sess_port=PORT, preferredDialect=dialect, timeout=20)
    c = SMBConnection(existingConnection=smb)
    c.login(USER, PASSWORD)
    return c


def round_trip(name, dialect):
    c = connect(dialect)
    check(f"{name}: negotiated", c.getDialect() == dialect, hex(c.getDialect()))
    shares = [s["shi1_netname"][:-1] for s in c.listShares()]
    check(f"{name}: listShares names the share", SHARE in shares, str(shares))
    data = os.urandom(200 * 1024)
    top = f"imp_{name.replace('.', '_')}"
    c.putFile(SHARE, f"{top}.bin", io.BytesIO(data).read)  # a file in the share's root
    c.createDirectory(SHARE, top)
    c.rename(SHARE, f"{top}.bin", f"{top}\\moved.bin")
    got = io.BytesIO()
    c.getFile(SHARE, f"{top}\\moved.bin", got.write)
    check(f"{name}: 200 KB put, renamed into a new directory and read back", got.getvalue() == data,
          f"{len(got.getvalue())} bytes")
    listed = sorted(f.get_longname() for f in c.listPath(SHARE, f"{top}\\*"))
    check(f"{name}: listPath of the directory", listed == [".", "..", "moved.bin"], str(listed))
    c.deleteFile(SHARE, f"{top}\\moved.bin")
    c.deleteDirectory(SHARE, top)
    gone = [f.get_longname() for f in c.listPath(SHARE, "*")]
    check(f"{name}: deleted", top not in gone and f"{top}.bin" not in gone, str(gone))
    c.logoff()


def ntlmv1_refused():
    # impacket's switch to NTLMv1 is getNTLMSSPType3's use_ntlmv2, whose
    # default (ntlm.USE_NTLMv2) was bound at import: pass it explicitly.
    type3 = ntlm.getNTLMSSPType3
    ntlm.getNTLMSSPType3 = functools.partial(type3, use_ntlmv2=False)
    try:
        connect(smb3structs.SMB2_DIALECT_30)
        check("an NTLMv1 login is refused", False, "it succeeded")
    except SessionError as e:
        check("an NTLMv1 login is refused", "STATUS_LOGON_FAILURE" in str(e), str(e))
    finally:
        ntlm.getNTLMSSPType3 = type3


def encryption_refused():
    c = connect(smb3structs.SMB2_DIALECT_21)
    try:
        c.connectTree(ENCRYPTED_SHARE)
        check("SMB 2.1 at a share that requires encryption is refused", False, "tree connect succeeded")
    except SessionError as e:
        check("SMB 2.1 at a share that requires encryption is refused", "STATUS_ACCESS_DENIED" in str(e), str(e))
    c.logoff()


def main():
    for name, dialect in DIALECTS.items():
        try:
            round_trip(name, dialect)
        except Exception as e:  # the client's own failure is this dialect's failure, not the script's
            check(f"{name}: impacket's operations", False, f"{type(e).__name__}: {e}")
    ntlmv1_refused()
    if ENCRYPTED_SHARE:
        encryption_refused()
    print(f"impacket: {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
