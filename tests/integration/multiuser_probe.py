#!/usr/bin/env python3
"""One user against another's files with a raw SMB2 client: what the
server keeps on a user's behalf outside the file's data (EAs, a stored
DACL, DOS attributes, times) is as protected as the data
(docs/security.md, "One user's files and another").

usage: multiuser_probe.py PORT SHARE OWNER OWNER_PASS OTHER OTHER_PASS
  The share holds private.txt (mode 0600) and public.txt (0644), both the
  owner's. The owner stores an EA on each; the other user then tries to
  read and replace the EAs, set a DACL, the attributes and the times,
  through opens that ask for those rights and through opens that asked
  for less (MAXIMUM_ALLOWED, attributes only), and must be refused with
  ACCESS_DENIED where the file's mode gives it no such right; the owner
  finds everything as it left it and keeps its own access.
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import struct
import sys

import rawsmb
import smb2user

FILE_READ_DATA, FILE_READ_EA, FILE_WRITE_EA = 0x1, 0x8, 0x10
FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES = 0x80, 0x100
DELETE, READ_CONTROL, WRITE_DAC, WRITE_OWNER = 0x10000, 0x20000, 0x40000, 0x80000
MAXIMUM_ALLOWED, GENERIC_ALL = 0x02000000, 0x10000000
SMB2_0_INFO_FILE, SMB2_0_INFO_SECURITY = 1, 3
FILE_BASIC, FILE_FULL_EA, FILE_ACCESS_INFO = 4, 15, 8
SL_RESTART_SCAN = 1
DACL_SECURITY_INFORMATION, OWNER_SECURITY_INFORMATION = 4, 1
FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_SYSTEM = 0x2, 0x4
ACCESS_DENIED = 0xC0000022
EA_NAME, EA_VALUE = b"OWNERS", b"owner's value"


def name(st):
    return smb2user.status_name(st)


def set_info(c, fid, info_type, info_class, buf, additional=0):
    body = struct.pack("<HBBIHHI", 33, info_type, info_class, len(buf), 64 + 32, 0, additional) + fid + buf
    return c.request(17, body)[0]


def full_ea(ea_name, value):
    return struct.pack("<IBBH", 0, 0, len(ea_name), len(value)) + ea_name + b"\0" + value


def deny_everyone_sd():
    """A self-relative descriptor whose DACL denies Everyone everything."""
    everyone = struct.pack("<BB6sI", 1, 1, b"\0\0\0\0\0\1", 0)
    ace = struct.pack("<BBHI", 1, 0, 8 + len(everyone), 0x001F01FF) + everyone
    acl = struct.pack("<BBHHH", 2, 0, 8 + len(ace), 1, 0) + ace
    return struct.pack("<BBHIIII", 1, 0, 0x8004, 0, 0, 0, 20) + acl


def basic_info(attributes, creation_time):
    return struct.pack("<QQQQII", creation_time, 0, 0, 0, attributes, 0)


def granted(c, fid):
    st, data = rawsmb.query_info(c, fid, SMB2_0_INFO_FILE, FILE_ACCESS_INFO)
    return struct.unpack_from("<I", data)[0] if st == 0 else None


def owner_prepares(c, f):
    st, fid = c.create(f, FILE_READ_DATA | FILE_WRITE_EA | READ_CONTROL | WRITE_DAC)
    rawsmb.check(f"owner: open {f} to store an EA", st == 0, name(st))
    if st != 0:
        return
    st = set_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, full_ea(EA_NAME, EA_VALUE))
    rawsmb.check(f"owner: store an EA on {f}", st == 0, name(st))
    c.close(fid)


def refused_open(c, f, what, access):
    st, fid = c.create(f, access)
    rawsmb.check(f"other: {f} open for {what}: ACCESS_DENIED", st == ACCESS_DENIED, name(st))
    if fid:  # granted after all: what it could do with it shows in the owner's checks
        set_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, full_ea(EA_NAME, b"other's value"))
        set_info(c, fid, SMB2_0_INFO_SECURITY, 0, deny_everyone_sd(), DACL_SECURITY_INFORMATION)
        set_info(c, fid, SMB2_0_INFO_FILE, FILE_BASIC, basic_info(FILE_ATTRIBUTE_HIDDEN, 116444736000000000))
        c.close(fid)


def refused_on_handle(c, f, fid, how):
    """Every metadata change through a handle that was not granted it."""
    st = set_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, full_ea(EA_NAME, b"other's value"))
    rawsmb.check(f"other: {f} ({how}): replacing the EA is ACCESS_DENIED", st == ACCESS_DENIED, name(st))
    st = set_info(c, fid, SMB2_0_INFO_SECURITY, 0, deny_everyone_sd(), DACL_SECURITY_INFORMATION)
    rawsmb.check(f"other: {f} ({how}): setting a DACL is ACCESS_DENIED", st == ACCESS_DENIED, name(st))
    st = set_info(c, fid, SMB2_0_INFO_FILE, FILE_BASIC,
                  basic_info(FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM, 116444736000000000))
    rawsmb.check(f"other: {f} ({how}): setting attributes and times is ACCESS_DENIED", st == ACCESS_DENIED,
                 name(st))


def other_private(c):
    f = "private.txt"  # 0600: the mode gives Everyone nothing but the attributes and the descriptor
    for what, access in (("FILE_READ_EA", FILE_READ_EA), ("FILE_WRITE_EA", FILE_WRITE_EA), ("WRITE_DAC", WRITE_DAC),
                         ("WRITE_OWNER", WRITE_OWNER), ("FILE_WRITE_ATTRIBUTES", FILE_WRITE_ATTRIBUTES),
                         ("DELETE", DELETE), ("GENERIC_ALL", GENERIC_ALL)):
        refused_open(c, f, what, access)
    st, fid = c.create(f, FILE_READ_ATTRIBUTES)
    rawsmb.check(f"other: {f} open for FILE_READ_ATTRIBUTES only is allowed", st == 0, name(st))
    if fid:
        c.close(fid)
    st, fid = c.create(f, MAXIMUM_ALLOWED)
    rawsmb.check(f"other: {f} MAXIMUM_ALLOWED opens", st == 0, name(st))
    if not fid:
        return
    g = granted(c, fid)
    want = READ_CONTROL | FILE_READ_ATTRIBUTES | 0x100000
    rawsmb.check(f"other: {f} MAXIMUM_ALLOWED grants only attributes and the descriptor", g == want,
                 f"granted {g and hex(g)}")
    st, _ = rawsmb.query_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check(f"other: {f} (MAXIMUM_ALLOWED): reading the EAs is ACCESS_DENIED", st == ACCESS_DENIED, name(st))
    refused_on_handle(c, f, fid, "MAXIMUM_ALLOWED")
    c.close(fid)


def other_public(c):
    f = "public.txt"  # 0644: Everyone may read, EAs included, and change nothing
    for what, access in (("FILE_WRITE_EA", FILE_WRITE_EA), ("WRITE_DAC", WRITE_DAC), ("WRITE_OWNER", WRITE_OWNER),
                         ("FILE_WRITE_ATTRIBUTES", FILE_WRITE_ATTRIBUTES), ("GENERIC_ALL", GENERIC_ALL)):
        refused_open(c, f, what, access)
    st, fid = c.create(f, MAXIMUM_ALLOWED)
    rawsmb.check(f"other: {f} MAXIMUM_ALLOWED opens", st == 0, name(st))
    if not fid:
        return
    g = granted(c, fid) or 0
    rawsmb.check(f"other: {f} MAXIMUM_ALLOWED grants reading, nothing that changes the file",
                 g & FILE_READ_DATA and not g & (FILE_WRITE_EA | WRITE_DAC | WRITE_OWNER | FILE_WRITE_ATTRIBUTES | 0x6),
                 f"granted {hex(g)}")
    st, data = rawsmb.query_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check(f"other: {f} the mode lets it read the EAs", st == 0 and EA_VALUE in data, name(st))
    refused_on_handle(c, f, fid, "MAXIMUM_ALLOWED")
    c.close(fid)
    st, fid = c.create(f, FILE_READ_DATA | READ_CONTROL)
    rawsmb.check(f"other: {f} open for reading", st == 0, name(st))
    if fid:
        refused_on_handle(c, f, fid, "a read open")
        c.close(fid)


def owner_checks(c, f):
    st, fid = c.create(f, FILE_READ_DATA | FILE_READ_EA | FILE_READ_ATTRIBUTES | READ_CONTROL | WRITE_DAC)
    rawsmb.check(f"owner: {f} still opens for reading and WRITE_DAC", st == 0, name(st))
    if not fid:
        return
    st, data = rawsmb.query_info(c, fid, SMB2_0_INFO_FILE, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check(f"owner: {f} the EA is its own", st == 0 and EA_VALUE in data and b"other's" not in data, name(st))
    st, data = rawsmb.query_info(c, fid, SMB2_0_INFO_FILE, FILE_BASIC)
    attrs = struct.unpack_from("<I", data, 32)[0] if st == 0 else None
    rawsmb.check(f"owner: {f} is neither HIDDEN nor SYSTEM", attrs is not None and not attrs & 0x6,
                 f"attributes {attrs}")
    st, data = rawsmb.query_info(c, fid, SMB2_0_INFO_SECURITY, 0, DACL_SECURITY_INFORMATION)
    rawsmb.check(f"owner: {f} has no DENY ACE", st == 0 and b"\x01\x00\x14\x00" not in data, name(st))
    c.close(fid)


def main():
    port, share, owner, owner_pass, other, other_pass = sys.argv[1:7]
    del port  # rawsmb reads it from argv
    o = smb2user.logged_in(owner, owner_pass, share)
    for f in ("private.txt", "public.txt"):
        owner_prepares(o, f)
    x = smb2user.logged_in(other, other_pass, share)
    other_private(x)
    other_public(x)
    for f in ("private.txt", "public.txt"):
        owner_checks(o, f)
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
