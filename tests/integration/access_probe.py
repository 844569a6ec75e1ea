#!/usr/bin/env python3
"""Sends one access scenario as a logged-in user and prints the statuses.

usage: access_probe.py PORT SHARE USER PASSWORD SCENARIO PATH
  doc-max-file  CREATE MAXIMUM_ALLOWED, FILE_DELETE_ON_CLOSE|FILE_NON_DIRECTORY_FILE, then CLOSE
  doc-max-dir   the same with FILE_DIRECTORY_FILE
  doc-delete    CREATE DELETE|FILE_READ_ATTRIBUTES with FILE_DELETE_ON_CLOSE, then CLOSE
  disposition   CREATE DELETE|FILE_READ_ATTRIBUTES, SET_INFO FileDispositionInformation 1, CLOSE
  max-write     CREATE MAXIMUM_ALLOWED, WRITE one byte, SET_INFO end of file 0, CLOSE
Prints "create=STATUS" and the later steps' "step=STATUS" on one line.
"""
import struct
import sys

import smb2user

MAXIMUM_ALLOWED, DELETE, FILE_READ_ATTRIBUTES = 0x02000000, 0x00010000, 0x80
FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_DELETE_ON_CLOSE = 0x1, 0x40, 0x1000
FILE_DISPOSITION_INFORMATION, FILE_END_OF_FILE_INFORMATION = 13, 20
DELETE_PENDING = b"\x01"


def main():
    _, _, share, user, password, scenario, path = sys.argv
    c = smb2user.logged_in(user, password, share)
    name = smb2user.status_name
    out = []
    if scenario in ("doc-max-file", "doc-max-dir", "doc-delete"):
        kind = FILE_DIRECTORY_FILE if scenario == "doc-max-dir" else FILE_NON_DIRECTORY_FILE
        access = DELETE | FILE_READ_ATTRIBUTES if scenario == "doc-delete" else MAXIMUM_ALLOWED
        st, fid = c.create(path, access, FILE_DELETE_ON_CLOSE | kind)
        out.append(f"create={name(st)}")
        if fid:
            out.append(f"close={name(c.close(fid))}")
    elif scenario == "disposition":
        st, fid = c.create(path, DELETE | FILE_READ_ATTRIBUTES)
        out.append(f"create={name(st)}")
        if fid:
            out.append(f"setinfo={name(c.set_info(fid, FILE_DISPOSITION_INFORMATION, DELETE_PENDING))}")
            out.append(f"close={name(c.close(fid))}")
    elif scenario == "max-write":
        st, fid = c.create(path, MAXIMUM_ALLOWED)
        out.append(f"create={name(st)}")
        if fid:
            out.append(f"write={name(c.write(fid, b'x'))}")
            out.append(f"truncate={name(c.set_info(fid, FILE_END_OF_FILE_INFORMATION, struct.pack('<Q', 0)))}")
            out.append(f"delete={name(c.set_info(fid, FILE_DISPOSITION_INFORMATION, DELETE_PENDING))}")
            out.append(f"close={name(c.close(fid))}")
    else:
        sys.exit(f"unknown scenario {scenario}")
    print(" ".join(out))


if __name__ == "__main__":
    main()
