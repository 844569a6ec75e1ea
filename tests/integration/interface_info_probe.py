#!/usr/bin/env python3
"""FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2 3.3.5.15.11) over a logged-in
raw SMB 3.0 session: the server listens on 127.0.0.1 only, and its
`interfaces` entry for it says capability=RSS, speed=25G, if_index=9; the
answer must be exactly that one address with those values.

usage: interface_info_probe.py PORT SHARE USER PASS
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import struct
import sys

import rawsmb
import smb2user

IOCTL = 11
FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FC
SMB2_0_IOCTL_IS_FSCTL = 1
RSS_CAPABLE = 1
AF_INET_WINDOWS = 0x0002


def query(c):
    body = struct.pack("<HHI", 57, 0, FSCTL_QUERY_NETWORK_INTERFACE_INFO) + b"\xff" * 16
    body += struct.pack("<IIIIIIII", 0, 0, 0, 0, 0, 65536, SMB2_0_IOCTL_IS_FSCTL, 0)
    st, r = c.request(IOCTL, body)
    if st != 0:
        return st, []
    off, length = struct.unpack_from("<II", r, 64 + 32)
    data, entries = r[off:off + length], []
    while data:
        nxt, index, caps, _, speed, family = struct.unpack_from("<IIIIQH", data, 0)
        entries.append((index, caps, speed, family, bytes(data[28:32])))
        if not nxt:
            break
        data = data[nxt:]
    return st, entries


def main():
    _, _, share, user, password = sys.argv
    c = smb2user.logged_in(user, password, share, dialect=0x0300)
    st, entries = query(c)
    rawsmb.check("FSCTL_QUERY_NETWORK_INTERFACE_INFO succeeds", st == 0, smb2user.status_name(st))
    rawsmb.check("one interface: the one address the server listens on", len(entries) == 1, str(entries))
    if entries:
        index, caps, speed, family, addr = entries[0]
        rawsmb.check("its address is 127.0.0.1", family == AF_INET_WINDOWS and addr == bytes([127, 0, 0, 1]),
                     f"family 0x{family:x}, {list(addr)}")
        rawsmb.check("capability=RSS from the configuration", caps == RSS_CAPABLE, str(caps))
        rawsmb.check("speed=25G from the configuration", speed == 25_000_000_000, str(speed))
        rawsmb.check("if_index=9 from the configuration", index == 9, str(index))
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
