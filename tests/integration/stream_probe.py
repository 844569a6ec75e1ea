#!/usr/bin/env python3
"""Named-stream requests smbclient cannot send.

usage: stream_probe.py PORT SHARE USER PASSWORD fsattr
         opens the share root, sends QUERY_INFO FileFsAttributeInformation
         (MS-FSCC 2.5.1), prints "named_streams=1" when FILE_NAMED_STREAMS
         is set, else "named_streams=0"
       stream_probe.py PORT SHARE USER PASSWORD delete NAME
         opens NAME (a stream: "file:stream") with DELETE and
         FILE_DELETE_ON_CLOSE and closes it; prints "delete=STATUS"
       stream_probe.py PORT SHARE USER PASSWORD rename-base FILE STREAM NEWNAME
         opens FILE:STREAM (sharing everything), then on a second
         connection FILE, and renames FILE to NEWNAME; prints
         "rename=STATUS" (Windows: ACCESS_DENIED while a stream is open)
"""
import struct
import sys

import smb2user

FILE_READ_ATTRIBUTES, DELETE = 0x80, 0x00010000
FILE_DELETE_ON_CLOSE = 0x1000
FILE_ALL_ACCESS, FILE_OPEN_IF, FILE_RENAME_INFORMATION = 0x001F01FF, 3, 10
SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION = 2, 5
FILE_NAMED_STREAMS = 0x00040000


def delete(c, name):
    st, fid = c.create(name, DELETE | FILE_READ_ATTRIBUTES, options=FILE_DELETE_ON_CLOSE)
    if st == 0:
        st = c.close(fid)
    print(f"delete={smb2user.status_name(st)}")


def rename_base(c, user, password, share, name, stream, new_name):
    st, fid = c.create(f"{name}:{stream}", FILE_ALL_ACCESS, disposition=FILE_OPEN_IF)
    if st != 0:
        sys.exit(f"create of the stream: {smb2user.status_name(st)}")
    c2 = smb2user.logged_in(user, password, share)
    st, base = c2.create(name, FILE_ALL_ACCESS)
    if st != 0:
        sys.exit(f"open of the file: {smb2user.status_name(st)}")
    encoded = new_name.encode("utf-16-le")
    info = struct.pack("<B7xQI", 0, 0, len(encoded)) + encoded  # FILE_RENAME_INFORMATION_TYPE_2
    print(f"rename={smb2user.status_name(c2.set_info(base, FILE_RENAME_INFORMATION, info))}")


def main():
    _, _port, share, user, password, what, *args = sys.argv
    c = smb2user.logged_in(user, password, share)
    if what == "delete":
        return delete(c, args[0])
    if what == "rename-base":
        return rename_base(c, user, password, share, *args)
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
