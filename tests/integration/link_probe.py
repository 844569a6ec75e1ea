"""Raw FileLinkInformation requests (MS-FSCC 2.4.27.2) with names smbclient
would normalize: prints one 'name status' line a case, and the link count
FileStandardInformation reports. usage: link_probe.py PORT USER PASS SHARE"""
import struct
import sys

import rawsmb
import smb2user

FILE_READ_ATTRIBUTES, DELETE = 0x80, 0x10000


def link_info(name, replace=False):
    n = name.encode("utf-16-le")
    return struct.pack("<B7xQI", int(replace), 0, len(n)) + n


def main():
    rawsmb.PORT = int(sys.argv[1])
    c = smb2user.logged_in(sys.argv[2], sys.argv[3], sys.argv[4])
    st, fid = c.create("a.txt", FILE_READ_ATTRIBUTES | DELETE)
    assert st == 0, smb2user.status_name(st)
    for case, target, replace in [("above-root", "..\\..\\escape", False), ("stream", "x.txt:s", False),
                                  ("collision", "taken.txt", False), ("replace", "taken.txt", True),
                                  ("second", "sub\\second.txt", False)]:
        print(case, smb2user.status_name(c.set_info(fid, 11, link_info(target, replace))))
    st, buf = rawsmb.query_info(c, fid, 1, 5)  # FileStandardInformation
    print("links", struct.unpack_from("<I", buf, 16)[0] if st == 0 else smb2user.status_name(st))
    c.close(fid)


main()
