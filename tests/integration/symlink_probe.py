"""Symbolic links as SMB2 clients make and meet them, in raw requests: makes
links with FSCTL_SET_REPARSE_POINT (Windows, NFS and WSL forms), reads them
back with FSCTL_GET_REPARSE_POINT, lists them, opens through them and prints
one 'case result' line a step. usage: symlink_probe.py PORT USER PASS SHARE [make-only]"""
import struct
import sys

import rawsmb
import smb2user

GENERIC_ALL, FILE_READ_DATA, FILE_READ_ATTRIBUTES = 0x10000000, 0x1, 0x80
FILE_OPEN, FILE_CREATE = 1, 2
FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_OPEN_REPARSE_POINT = 0x1, 0x40, 0x00200000
SET_REPARSE, GET_REPARSE, DELETE_REPARSE = 0x000900A4, 0x000900A8, 0x000900AC
TAG_SYMLINK, TAG_NFS, TAG_LX_SYMLINK = 0xA000000C, 0x80000014, 0xA000001D
NFS_LNK = 0x014B4E4C


def windows_link(target, relative=True):
    n = target.encode("utf-16-le")
    data = struct.pack("<HHHHI", 0, len(n), len(n), len(n), 1 if relative else 0) + n + n
    return struct.pack("<IHH", TAG_SYMLINK, len(data), 0) + data


def nfs_link(target):
    data = struct.pack("<Q", NFS_LNK) + target.encode("utf-16-le")
    return struct.pack("<IHH", TAG_NFS, len(data), 0) + data


def wsl_link(target):
    data = struct.pack("<I", 2) + target.encode()
    return struct.pack("<IHH", TAG_LX_SYMLINK, len(data), 0) + data


def ioctl(c, fid, code, data=b"", max_out=0):
    body = struct.pack("<HHI", 57, 0, code) + fid + struct.pack("<IIIIIIII", 120 if data else 0, len(data), 0, 0, 0,
                                                                max_out, 1, 0) + data
    st, r = c.request(11, body)
    if st != 0:
        return st, b""
    off, count = struct.unpack_from("<II", r, 64 + 32)
    return st, r[off:off + count]


def make(c, name, buf, directory=False):
    opts = FILE_OPEN_REPARSE_POINT | (FILE_DIRECTORY_FILE if directory else FILE_NON_DIRECTORY_FILE)
    st, fid = c.create(name, GENERIC_ALL, opts, FILE_CREATE)
    if st != 0:
        return st
    st = ioctl(c, fid, SET_REPARSE, buf)[0]
    c.close(fid)
    return st


def read_back(c, name):
    st, fid = c.create(name, FILE_READ_ATTRIBUTES, FILE_OPEN_REPARSE_POINT)
    if st != 0:
        return smb2user.status_name(st)
    st, buf = ioctl(c, fid, GET_REPARSE, b"", 4096)
    c.close(fid)
    if st != 0:
        return smb2user.status_name(st)
    tag, _, _, so, sl, _, _, flags = struct.unpack_from("<IHHHHHHI", buf)
    name = buf[20 + so:20 + so + sl].decode("utf-16-le")
    return f"{tag:08X} {flags} {name}"


def listing(c):
    """name -> (attributes, EaSize) from FileIdBothDirectoryInformation."""
    st, fid = c.create("", 0x1 | 0x80, FILE_DIRECTORY_FILE)
    pattern = "*".encode("utf-16-le")
    body = struct.pack("<HBBIQQHHI", 33, 37, 1, 0, 0, 0, 96, len(pattern), 65536)
    body = body[:8] + fid + body[24:] + pattern
    st, r = c.request(14, body)
    c.close(fid)
    out, (off, ln) = {}, struct.unpack_from("<HI", r, 64 + 2)
    at = off
    while st == 0 and ln:
        nxt, = struct.unpack_from("<I", r, at)
        attrs, nlen, ea = struct.unpack_from("<III", r, at + 56)
        out[r[at + 104:at + 104 + nlen].decode("utf-16-le")] = (attrs, ea)
        if not nxt:
            break
        at += nxt
    return out


def stopped(c, name):
    """The status of a plain open, and the target its symlink error response names."""
    n = name.encode("utf-16-le")
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, FILE_READ_DATA, 0, 7, FILE_OPEN, 0, 120, len(n), 0,
                       0) + n
    st, r = c.request(5, body)
    if st != 0x8000002D:
        return smb2user.status_name(st)
    err = r[64 + 8:]
    symlen, tag, rtag, _, unparsed, so, sl = struct.unpack_from("<IIIHHHH", err)
    target = err[28 + so:28 + so + sl].decode("utf-16-le")
    return f"STOPPED_ON_SYMLINK {tag:08X} {rtag:08X} {unparsed} {target}"


def main():
    rawsmb.PORT = int(sys.argv[1])
    c = smb2user.logged_in(sys.argv[2], sys.argv[3], sys.argv[4])
    if sys.argv[5:] == ["make-only"]:  # a share without "client symlinks"
        print("make-off", smb2user.status_name(make(c, "off", windows_link("dir"))))
        return
    print("make-win", smb2user.status_name(make(c, "win", windows_link("dir\\f.txt"))))
    print("make-windir", smb2user.status_name(make(c, "windir", windows_link("dir"), directory=True)))
    print("make-nfs-up", smb2user.status_name(make(c, "nfs-up", nfs_link("../../../../etc/passwd"))))
    print("make-wsl-abs", smb2user.status_name(make(c, "wsl-abs", wsl_link("/etc"))))
    print("make-posix-abs", smb2user.status_name(make(c, "posix-abs", windows_link("\\etc\\passwd", False))))
    print("make-drive", smb2user.status_name(make(c, "drive", windows_link("\\??\\C:\\Windows", False))))
    print("get-win", read_back(c, "win"))
    print("get-nfs-up", read_back(c, "nfs-up"))
    print("get-wsl-abs", read_back(c, "wsl-abs"))
    ls = listing(c)
    for name in ("win", "windir", "dir"):
        attrs, ea = ls.get(name, (0, 0))
        print(f"list-{name} {attrs:#x} {ea:08X}")
    print("open-win", stopped(c, "win"))
    print("open-nfs-up", stopped(c, "nfs-up"))
    print("open-through-wsl-abs", stopped(c, "wsl-abs\\passwd"))
    print("open-through-windir", stopped(c, "windir\\f.txt"))
    make(c, "gone", windows_link("dir\\f.txt"))
    st, fid = c.create("gone", GENERIC_ALL, FILE_OPEN_REPARSE_POINT)
    print("delete-reparse", smb2user.status_name(ioctl(c, fid, DELETE_REPARSE, struct.pack("<IHH", TAG_SYMLINK, 0, 0))[0]
                                                 if st == 0 else st))
    if st == 0:
        c.close(fid)


main()
