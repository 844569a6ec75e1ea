#!/usr/bin/env python3
"""Extended attributes and the delayed LastWriteTime with a raw SMB2 client
(smbclient sends neither SET_INFO FileFullEaInformation nor QUERY_INFO
with an EA name list).

usage: ea_probe.py PORT SHARE USER PASSWORD ea|times
  ea     sets, lists, queries by name, replaces and removes EAs of a new file
         (ea.txt), creates ea-create.txt with an SMB2_CREATE_EA_BUFFER, and
         checks the errors of bad lists and the FILE_READ_EA / FILE_WRITE_EA
         access; leaves ea.txt with the EA "Kept" = "value"
  noea   a server that cannot store EAs: not advertised, EAS_NOT_SUPPORTED
  times  writes a new file and checks the LastWriteTime a query through the
         handle shows: unchanged at first, updated about 2 s later, and a
         path with '/' separators opens the file
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import struct
import sys
import time

import rawsmb
import smb2user

FILE_READ_DATA, FILE_WRITE_DATA, FILE_READ_EA, FILE_WRITE_EA = 0x1, 0x2, 0x8, 0x10
FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES = 0x80, 0x100
FILE_ALL_ACCESS, FILE_CREATE, FILE_OPEN_IF, FILE_OVERWRITE_IF = 0x001F01FF, 2, 3, 5
SMB2_0_INFO_FILE, SMB2_0_INFO_FILESYSTEM = 1, 2
FILE_BASIC, FILE_EA, FILE_FULL_EA, FILE_FS_ATTRIBUTE = 4, 7, 15, 5
SL_RESTART_SCAN, SL_RETURN_SINGLE_ENTRY, SL_INDEX_SPECIFIED = 1, 2, 4
FILE_SUPPORTS_EXTENDED_ATTRIBUTES = 0x00800000
STATUS = {0: "SUCCESS", 0xC000004F: "EAS_NOT_SUPPORTED", 0x80000005: "BUFFER_OVERFLOW", 0x80000012: "NO_MORE_EAS",
          0x80000013: "INVALID_EA_NAME",
          0x80000014: "EA_LIST_INCONSISTENT", 0xC0000022: "ACCESS_DENIED", 0xC0000023: "BUFFER_TOO_SMALL",
          0xC0000050: "EA_TOO_LARGE", 0xC0000051: "NONEXISTENT_EA_ENTRY", 0xC0000052: "NO_EAS_ON_FILE"}


def name(st):
    return STATUS.get(st, smb2user.status_name(st))


def chain(entries):
    """Links encoded entries into a list: NextEntryOffset, 4-aligned."""
    out = b""
    for i, e in enumerate(entries):
        if i < len(entries) - 1:
            e += b"\0" * (-len(e) % 4)
            e = struct.pack("<I", len(e)) + e[4:]
        out += e
    return out


def full_ea(entries):
    """FILE_FULL_EA_INFORMATION list of [(name, value, flags)]."""
    return chain([struct.pack("<IBBH", 0, flags, len(n), len(v)) + n + b"\0" + v for n, v, flags in entries])


def get_ea(names):
    """FILE_GET_EA_INFORMATION list of names."""
    return chain([struct.pack("<IB", 0, len(n)) + n + b"\0" for n in names])


def parse_full_ea(buf):
    out, at = [], 0
    while buf:
        nxt, flags, nlen, vlen = struct.unpack_from("<IBBH", buf, at)
        out.append((buf[at + 8:at + 8 + nlen], buf[at + 9 + nlen:at + 9 + nlen + vlen], flags))
        if not nxt:
            break
        at += nxt
    return out


def query(c, fid, info_class, info_type=SMB2_0_INFO_FILE, length=4096, input_buf=b"", flags=0, additional=0):
    return rawsmb.query_info(c, fid, info_type, info_class, additional, flags, length, input_buf)


def ea_test(c):
    st, root = c.create("", FILE_READ_ATTRIBUTES)
    rawsmb.check("open the share root", st == 0, name(st))
    st, data = query(c, root, FILE_FS_ATTRIBUTE, SMB2_0_INFO_FILESYSTEM)
    attrs = struct.unpack_from("<I", data)[0] if st == 0 else 0
    rawsmb.check("FILE_SUPPORTS_EXTENDED_ATTRIBUTES is advertised", attrs & FILE_SUPPORTS_EXTENDED_ATTRIBUTES != 0)
    c.close(root)

    st, fid = c.create("ea.txt", FILE_ALL_ACCESS, disposition=FILE_OVERWRITE_IF)
    rawsmb.check("create ea.txt", st == 0, name(st))
    st, _ = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check("a new file: NO_EAS_ON_FILE", st == 0xC0000052, name(st))
    st, data = query(c, fid, FILE_EA)
    rawsmb.check("a new file: EaSize 0", st == 0 and struct.unpack_from("<I", data)[0] == 0, name(st))
    eas = [(b"Kept", b"value", 0), (b"second", b"\x00\x01binary", 0x80), (b"gone", b"x" * 300, 0)]
    st = c.set_info(fid, FILE_FULL_EA, full_ea(eas))
    rawsmb.check("set three EAs", st == 0, name(st))
    st, data = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    got = sorted(parse_full_ea(data)) if st == 0 else []
    rawsmb.check("all three read back (names as set, values, FILE_NEED_EA)", got == sorted(eas), repr(got))
    st, _ = query(c, fid, FILE_FULL_EA)
    rawsmb.check("the scan goes on from its end: NO_MORE_EAS", st == 0x80000012, name(st))
    st, data = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN | SL_RETURN_SINGLE_ENTRY)
    rawsmb.check("SL_RETURN_SINGLE_ENTRY: one", st == 0 and len(parse_full_ea(data)) == 1, name(st))
    st, data = query(c, fid, FILE_FULL_EA, flags=SL_INDEX_SPECIFIED | SL_RETURN_SINGLE_ENTRY, additional=2)
    rawsmb.check("SL_INDEX_SPECIFIED 2: the second", st == 0 and len(parse_full_ea(data)) == 1, name(st))
    st, _ = query(c, fid, FILE_FULL_EA, flags=SL_INDEX_SPECIFIED, additional=9)
    rawsmb.check("SL_INDEX_SPECIFIED past the end: NONEXISTENT_EA_ENTRY", st == 0xC0000051, name(st))
    st, data = query(c, fid, FILE_FULL_EA, input_buf=get_ea([b"KEPT", b"absent"]))
    got = parse_full_ea(data) if st == 0 else []
    rawsmb.check("by name, without case; an absent one has no value",
                 got == [(b"Kept", b"value", 0), (b"absent", b"", 0)], repr(got))
    st, _ = query(c, fid, FILE_FULL_EA, length=8, flags=SL_RESTART_SCAN)
    rawsmb.check("a buffer too small for one entry: BUFFER_TOO_SMALL", st == 0xC0000023, name(st))
    st, data = query(c, fid, FILE_FULL_EA, length=330, flags=SL_RESTART_SCAN)  # "gone" (313 bytes) first
    rawsmb.check("room for one of three: BUFFER_OVERFLOW with it", st == 0x80000005 and len(parse_full_ea(data)) == 1,
                 name(st))
    st, data = query(c, fid, FILE_EA)
    size = struct.unpack_from("<I", data)[0] if st == 0 else 0
    listed = len(full_ea(sorted(eas, key=lambda e: e[0].upper())))
    rawsmb.check("EaSize is the size of the FILE_FULL_EA_INFORMATION list", size == listed, f"{size} {listed}")
    st = c.set_info(fid, FILE_FULL_EA, full_ea([(b"gone", b"", 0), (b"SECOND", b"new", 0)]))
    rawsmb.check("remove one (no value), replace one in another case", st == 0, name(st))
    st, data = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    got = sorted(parse_full_ea(data)) if st == 0 else []
    rawsmb.check("two left", got == [(b"Kept", b"value", 0), (b"SECOND", b"new", 0)], repr(got))

    bad = full_ea([(b"a", b"1", 0), (b"b", b"2", 0)])
    bad = struct.pack("<I", 7) + bad[4:]
    rawsmb.check("a misaligned NextEntryOffset: EA_LIST_INCONSISTENT",
                 c.set_info(fid, FILE_FULL_EA, bad) == 0x80000014)
    rawsmb.check("a name with '*': INVALID_EA_NAME",
                 c.set_info(fid, FILE_FULL_EA, full_ea([(b"a*", b"1", 0)])) == 0x80000013)
    rawsmb.check("a list past its buffer: EA_LIST_INCONSISTENT",
                 c.set_info(fid, FILE_FULL_EA, full_ea([(b"abc", b"1234", 0)])[:-2]) == 0x80000014)
    # One SET_INFO carries at most 64 KiB (MaxTransactSize of 2.1): the total is passed in two.
    st = c.set_info(fid, FILE_FULL_EA, full_ea([(b"huge0", b"h" * 33000, 0)]))
    rawsmb.check("33000 bytes: set, or EA_TOO_LARGE where the filesystem keeps less (ext4)",
                 st in (0, 0xC0000050), name(st))
    st = c.set_info(fid, FILE_FULL_EA, full_ea([(b"huge1", b"h" * 33000, 0)]))
    rawsmb.check("more than 64 KiB in all: EA_TOO_LARGE", st == 0xC0000050, name(st))
    c.set_info(fid, FILE_FULL_EA, full_ea([(b"huge0", b"", 0)]))
    c.close(fid)

    st, fid = c.create("ea.txt", FILE_READ_DATA | FILE_READ_ATTRIBUTES)
    st2, _ = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check("no FILE_READ_EA: the query is ACCESS_DENIED", st == 0 and st2 == 0xC0000022, name(st2))
    st = c.set_info(fid, FILE_FULL_EA, full_ea([(b"x", b"1", 0)]))
    rawsmb.check("no FILE_WRITE_EA: the set is ACCESS_DENIED", st == 0xC0000022, name(st))
    c.close(fid)

    ctx = rawsmb.create_contexts([(b"ExtA", full_ea([(b"FromCreate", b"made", 0)]))])
    st, made = c.create_ex("ea-create.txt", FILE_ALL_ACCESS, disposition=FILE_OVERWRITE_IF, contexts=ctx)
    rawsmb.check("CREATE with SMB2_CREATE_EA_BUFFER", st == 0, name(st))
    if made:
        st, data = query(c, made.fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
        got = parse_full_ea(data) if st == 0 else []
        rawsmb.check("the new file has the EA", got == [(b"FromCreate", b"made", 0)], repr(got))
        c.close(made.fid)
    ctx = rawsmb.create_contexts([(b"ExtA", full_ea([(b"bad?name", b"1", 0)]))])
    st, made = c.create_ex("ea-bad.txt", FILE_ALL_ACCESS, disposition=FILE_CREATE, contexts=ctx)
    rawsmb.check("CREATE with a bad EA buffer: INVALID_EA_NAME", st == 0x80000013, name(st))
    st, _ = c.create("ea-bad.txt", FILE_READ_ATTRIBUTES)
    rawsmb.check("... and no file was made", st == 0xC0000034, name(st))


def noea_test(c):
    st, root = c.create("", FILE_READ_ATTRIBUTES)
    st, data = query(c, root, FILE_FS_ATTRIBUTE, SMB2_0_INFO_FILESYSTEM)
    attrs = struct.unpack_from("<I", data)[0] if st == 0 else FILE_SUPPORTS_EXTENDED_ATTRIBUTES
    rawsmb.check("FILE_SUPPORTS_EXTENDED_ATTRIBUTES is not advertised", attrs & FILE_SUPPORTS_EXTENDED_ATTRIBUTES == 0)
    c.close(root)
    st, fid = c.create("noea.txt", FILE_ALL_ACCESS, disposition=FILE_OVERWRITE_IF)
    st = c.set_info(fid, FILE_FULL_EA, full_ea([(b"x", b"1", 0)]))
    rawsmb.check("set: EAS_NOT_SUPPORTED", st == 0xC000004F, name(st))
    st, _ = query(c, fid, FILE_FULL_EA, flags=SL_RESTART_SCAN)
    rawsmb.check("query: EAS_NOT_SUPPORTED", st == 0xC000004F, name(st))
    c.close(fid)


def basic_write_time(c, fid):
    st, data = query(c, fid, FILE_BASIC)
    return struct.unpack_from("<Q", data, 16)[0] if st == 0 else None


def times_test(c):
    st, fid = c.create("dwt.txt", FILE_ALL_ACCESS, disposition=FILE_OVERWRITE_IF)
    rawsmb.check("create dwt.txt", st == 0, name(st))
    before = basic_write_time(c, fid)
    time.sleep(0.3)
    rawsmb.check("write", c.write(fid, b"data") == 0)
    rawsmb.check("right after the write LastWriteTime shows unchanged", basic_write_time(c, fid) == before)
    time.sleep(2.5)
    after = basic_write_time(c, fid)
    rawsmb.check("about 2 s later it shows the write", after is not None and after > before, f"{before} {after}")
    c.close(fid)
    c.create("dir", FILE_READ_ATTRIBUTES, disposition=FILE_OPEN_IF, options=1)
    st, fid = c.create("dir/sub.txt", FILE_ALL_ACCESS, disposition=FILE_OVERWRITE_IF)
    rawsmb.check("'/' separates: dir/sub.txt is made in dir", st == 0, name(st))
    if st == 0:
        c.close(fid)
    st, fid = c.create("dir\\sub.txt", FILE_READ_ATTRIBUTES)
    rawsmb.check("... and opens as dir\\sub.txt", st == 0, name(st))
    st, _ = c.create("dir/../../x", FILE_READ_ATTRIBUTES)
    rawsmb.check("'/' climbs no higher than '\\': dir/../../x is OBJECT_PATH_SYNTAX_BAD", st == 0xC000003B, name(st))


def main():
    _, _port, share, user, password, what = sys.argv
    c = smb2user.logged_in(user, password, share)
    {"ea": ea_test, "noea": noea_test, "times": times_test}[what](c)
    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
