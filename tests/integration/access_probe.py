#!/usr/bin/env python3
"""Sends one access scenario as a logged-in user and prints the statuses.

usage: access_probe.py PORT SHARE USER PASSWORD SCENARIO PATH
  doc-max-file  CREATE MAXIMUM_ALLOWED, FILE_DELETE_ON_CLOSE|FILE_NON_DIRECTORY_FILE, then CLOSE
  doc-max-dir   the same with FILE_DIRECTORY_FILE
  doc-delete    CREATE DELETE|FILE_READ_ATTRIBUTES with FILE_DELETE_ON_CLOSE, then CLOSE
  disposition   CREATE DELETE|FILE_READ_ATTRIBUTES, SET_INFO FileDispositionInformation 1, CLOSE
  max-write     CREATE MAXIMUM_ALLOWED, WRITE one byte, SET_INFO end of file 0, CLOSE
  set-readonly  CREATE (overwrite-if) for writing, WRITE, SET_INFO FileBasicInformation
                READONLY|ARCHIVE through that handle (cifs: chmod 444), CLOSE
  readonly-opens  opens of a READONLY file: FILE_WRITE_DATA, FILE_APPEND_DATA (refused,
                MS-FSA 2.1.5.1.2.1), MAXIMUM_ALLOWED (granted, then WRITE refused),
                FILE_WRITE_ATTRIBUTES (granted)
  clear-readonly  what the Linux kernel client sends for chmod 644 of a read-only file:
                CREATE FILE_WRITE_ATTRIBUTES, SET_INFO FileBasicInformation ARCHIVE, CLOSE;
                then CREATE for writing, WRITE, CLOSE
Prints "create=STATUS" and the later steps' "step=STATUS" on one line.
"""
import struct
import sys

import smb2user

MAXIMUM_ALLOWED, DELETE, FILE_READ_ATTRIBUTES = 0x02000000, 0x00010000, 0x80
FILE_WRITE_DATA, FILE_APPEND_DATA, FILE_WRITE_ATTRIBUTES = 0x2, 0x4, 0x100
FILE_OVERWRITE_IF = 5
FILE_BASIC_INFORMATION = 4
FILE_ATTRIBUTE_READONLY, FILE_ATTRIBUTE_ARCHIVE = 0x1, 0x20
FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_DELETE_ON_CLOSE = 0x1, 0x40, 0x1000
FILE_DISPOSITION_INFORMATION, FILE_END_OF_FILE_INFORMATION = 13, 20
DELETE_PENDING = b"\x01"


def basic_info(attributes):
    """FileBasicInformation that changes only the attributes (times 0: unchanged)."""
    return struct.pack("<QQQQII", 0, 0, 0, 0, attributes, 0)


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
    elif scenario == "set-readonly":
        st, fid = c.create(path, FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES, FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF)
        out.append(f"create={name(st)}")
        if fid:
            out.append(f"write={name(c.write(fid, b'data'))}")
            ro = basic_info(FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_ARCHIVE)
            out.append(f"readonly={name(c.set_info(fid, FILE_BASIC_INFORMATION, ro))}")
            out.append(f"close={name(c.close(fid))}")
    elif scenario == "readonly-opens":
        for label, access in (("write", FILE_WRITE_DATA), ("append", FILE_APPEND_DATA),
                              ("max", MAXIMUM_ALLOWED), ("attributes", FILE_WRITE_ATTRIBUTES)):
            st, fid = c.create(path, access)
            out.append(f"{label}={name(st)}")
            if fid and access == MAXIMUM_ALLOWED:
                out.append(f"max-write={name(c.write(fid, b'x'))}")
            if fid:
                c.close(fid)
    elif scenario == "clear-readonly":
        st, fid = c.create(path, FILE_WRITE_ATTRIBUTES)
        out.append(f"create={name(st)}")
        if fid:
            out.append(f"clear={name(c.set_info(fid, FILE_BASIC_INFORMATION, basic_info(FILE_ATTRIBUTE_ARCHIVE)))}")
            out.append(f"close={name(c.close(fid))}")
        st, fid = c.create(path, FILE_WRITE_DATA | FILE_APPEND_DATA)
        out.append(f"reopen={name(st)}")
        if fid:
            out.append(f"write={name(c.write(fid, b'more', 4))}")
            c.close(fid)
    else:
        sys.exit(f"unknown scenario {scenario}")
    print(" ".join(out))


if __name__ == "__main__":
    main()
