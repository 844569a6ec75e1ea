#!/usr/bin/env python3
"""Asks a share whether it advertises named streams.

usage: stream_probe.py PORT SHARE USER PASSWORD
Opens the share root, sends QUERY_INFO FileFsAttributeInformation (MS-FSCC
2.5.1) and prints "named_streams=1" when FILE_NAMED_STREAMS is set, else
"named_streams=0".
"""
import struct
import sys

import rawsmb
import smb2user

FILE_READ_ATTRIBUTES = 0x80
SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION = 2, 5
FILE_NAMED_STREAMS = 0x00040000


def main():
    _, port, share, user, password = sys.argv
    rawsmb.PORT = int(port)
    c = smb2user.logged_in(user, password, share)
    st, fid = c.create("", FILE_READ_ATTRIBUTES)
    if st != 0:
        sys.exit(f"create of the root: {smb2user.status_name(st)}")
    body = struct.pack("<HBBIHHIII", 41, SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION, 1024, 0, 0, 0, 0,
                       0) + fid
    st, r = c.request(16, body)
    if st != 0:
        sys.exit(f"query info: {smb2user.status_name(st)}")
    off, length = struct.unpack_from("<HI", r, 64 + 2)
    attrs = struct.unpack_from("<I", r, off)[0]
    print(f"named_streams={1 if attrs & FILE_NAMED_STREAMS else 0}")
    c.close(fid)


if __name__ == "__main__":
    main()
