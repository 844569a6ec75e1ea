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


def opened(c, out, path, access, steps=(), label="create", options=0, disposition=1):
    """CREATE, then each (label, request) step on the handle, then CLOSE; every status to `out`."""
    name = smb2user.status_name
    st, fid = c.create(path, access, options, disposition)
    out.append(f"{label}={name(st)}")
    if fid:
        for step, request in steps:
            out.append(f"{step}={name(request(fid))}")
        out.append(f"close={name(c.close(fid))}")


def main():
    _, _, share, user, password, scenario, path = sys.argv
    c = smb2user.logged_in(user, password, share)
    out = []
    if scenario in ("doc-max-file", "doc-max-dir", "doc-delete"):
        kind = FILE_DIRECTORY_FILE if scenario == "doc-max-dir" else FILE_NON_DIRECTORY_FILE
        access = DELETE | FILE_READ_ATTRIBUTES if scenario == "doc-delete" else MAXIMUM_ALLOWED
        opened(c, out, path, access, options=FILE_DELETE_ON_CLOSE | kind)
    elif scenario == "disposition":
        opened(c, out, path, DELETE | FILE_READ_ATTRIBUTES,
               [("setinfo", lambda fid: c.set_info(fid, FILE_DISPOSITION_INFORMATION, DELETE_PENDING))])
    elif scenario == "max-write":
        opened(c, out, path, MAXIMUM_ALLOWED,
               [("write", lambda fid: c.write(fid, b"x")),
                ("truncate", lambda fid: c.set_info(fid, FILE_END_OF_FILE_INFORMATION, struct.pack("<Q", 0))),
                ("delete", lambda fid: c.set_info(fid, FILE_DISPOSITION_INFORMATION, DELETE_PENDING))])
    elif scenario == "set-readonly":
        ro = basic_info(FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_ARCHIVE)
        opened(c, out, path, FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES,
               [("write", lambda fid: c.write(fid, b"data")),
                ("readonly", lambda fid: c.set_info(fid, FILE_BASIC_INFORMATION, ro))],
               options=FILE_NON_DIRECTORY_FILE, disposition=FILE_OVERWRITE_IF)
    elif scenario == "readonly-opens":
        for label, access in (("write", FILE_WRITE_DATA), ("append", FILE_APPEND_DATA),
                              ("max", MAXIMUM_ALLOWED), ("attributes", FILE_WRITE_ATTRIBUTES)):
            steps = [("max-write", lambda fid: c.write(fid, b"x"))] if access == MAXIMUM_ALLOWED else []
            opened(c, out, path, access, steps, label=label)
    elif scenario == "clear-readonly":
        opened(c, out, path, FILE_WRITE_ATTRIBUTES,
               [("clear", lambda fid: c.set_info(fid, FILE_BASIC_INFORMATION, basic_info(FILE_ATTRIBUTE_ARCHIVE)))])
        opened(c, out, path, FILE_WRITE_DATA | FILE_APPEND_DATA,
               [("write", lambda fid: c.write(fid, b"more", 4))], label="reopen")
    else:
        sys.exit(f"unknown scenario {scenario}")
    print(" ".join(out))

if __name__ == "__main__":
    main()
