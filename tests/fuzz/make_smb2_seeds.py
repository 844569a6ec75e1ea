#!/usr/bin/env python3
"""Seed inputs for fuzz_smb2_frame: well-formed requests for every command
the fuzzer should start from, in the harness's input format (each frame as
a 2-byte little-endian length, then the frame). Session 1 and tree 1 exist;
the harness renumbers message ids, and the first open of an input gets
FileId {1, 1}.

usage: make_smb2_seeds.py DIR
"""
import os
import struct
import sys

FID1 = struct.pack("<QQ", 1, 1)
RELATED = b"\xff" * 16


def header(cmd, next_cmd=0, related=False):
    flags = 0x4 if related else 0
    return struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 1, 0, cmd, 64, flags, next_cmd, 0, 0, 1, 1, b"\0" * 16)


def chain(*elements):
    """elements: (cmd, body) pairs; every one after the first is related."""
    out = b""
    for i, (cmd, body) in enumerate(elements):
        pdu = header(cmd, related=i > 0) + body
        if i + 1 < len(elements):
            pdu += b"\0" * (-len(pdu) % 8)
            pdu = pdu[:20] + struct.pack("<I", len(pdu)) + pdu[24:]
        out += pdu
    return out


def context(name, data):
    # Next, NameOffset 16, NameLength, Reserved, DataOffset 24, DataLength
    return struct.pack("<IHHHHI", 0, 16, len(name), 0, 24, len(data)) + name + b"\0" * (8 - len(name)) + data


def contexts(*ctxs):
    out = b""
    for i, c in enumerate(ctxs):
        if i + 1 < len(ctxs):
            c += b"\0" * (-len(c) % 8)
            c = struct.pack("<I", len(c)) + c[4:]
        out += c
    return out


def create(name, disposition=1, options=0, access=0x12019F, oplock=0, ctx=b""):
    n = name.encode("utf-16-le")
    name_off = 64 + 56
    ctx_off = (name_off + len(n) + 7) // 8 * 8 if ctx else 0
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, oplock, 2, 0, 0, access, 0, 7, disposition, options,
                       name_off, len(n), ctx_off, len(ctx)) + (n or b"\0")
    if ctx:
        body += b"\0" * (ctx_off - 64 - len(body)) + ctx
    return body


def lease_v2(key=b"K" * 16, state=7):
    return struct.pack("<16sIIQ16sHH", key, state, 0, 0, b"\0" * 16, 1, 0)


def read(fid=RELATED, length=4096, offset=0):
    return struct.pack("<HBBIQ16sIIIHH", 49, 0x50, 0, length, offset, fid, 0, 0, 0, 0, 0) + b"\0"


def write(data, fid=RELATED, offset=0):
    return struct.pack("<HHIQ16sIIHHI", 49, 64 + 48, len(data), offset, fid, 0, 0, 0, 0, 0) + data


def close(fid=RELATED, flags=1):
    return struct.pack("<HHI16s", 24, flags, 0, fid)


def query_info(info_type=1, cls=0x12, fid=RELATED, length=4096, extra=b""):
    return struct.pack("<HBBIHHIII16s", 41, info_type, cls, length, 64 + 40 if extra else 0, 0, len(extra), 0, 0,
                       fid) + (extra or b"\0")


def set_info(cls, data, info_type=1, fid=RELATED):
    return struct.pack("<HBBIHHI16s", 33, info_type, cls, len(data), 64 + 32, 0, 0, fid) + data


def query_directory(pattern="*", cls=0x25, fid=RELATED, flags=0):
    p = pattern.encode("utf-16-le")
    return struct.pack("<HBBI16sHHI", 33, cls, flags, 0, fid, 64 + 32, len(p), 65536) + p


def ioctl(ctl, data=b"", fid=RELATED, max_out=4096):
    # InputOffset, InputCount, MaxInputResponse, OutputOffset, OutputCount, MaxOutputResponse,
    # Flags (SMB2_0_IOCTL_IS_FSCTL), Reserved2
    return struct.pack("<HHI16sIIIIIIII", 57, 0, ctl, fid, 64 + 56 if data else 0, len(data), 0, 0, 0,
                       max_out, 1, 0) + (data or b"")


def lock(offset, length, flags, fid=RELATED):
    return struct.pack("<HHI16sQQII", 48, 1, 0, fid, offset, length, flags, 0)


def frames(*fs):
    return b"".join(struct.pack("<H", len(f)) + f for f in fs)


def seeds():
    basic = struct.pack("<QQQQII", 0, 0, 0x01D9000000000000, 0, 0, 0)
    yield "create_read_close", frames(chain((5, create("a.txt", ctx=contexts(context(b"MxAc", b""),
                                                                               context(b"QFid", b""))),),
                                            (8, read()), (6, close())))
    yield "windows_small_file", frames(chain((5, create("new.txt", disposition=5, ctx=contexts(
        context(b"RqLs", lease_v2())))), (9, write(b"x" * 300)), (0x11, set_info(4, basic)), (6, close())))
    yield "dir_listing", frames(chain((5, create("dir", options=1, access=0x100081)), (0x0E, query_directory()),
                                      (0x0E, query_directory("*.txt", cls=0x03, flags=1)), (6, close())))
    yield "query_infos", frames(chain((5, create("a.txt")), (0x10, query_info()), (0x10, query_info(cls=0x22)),
                                      (0x10, query_info(2, 0x01)), (0x10, query_info(3, 0, extra=b"")),
                                      (0x10, query_info(1, 0x0F, extra=b"\0" * 8)), (6, close())))
    yield "separate_frames", frames(chain((5, create("b.txt", disposition=3, oplock=9)),),
                                    chain((9, write(b"hello" * 20, fid=FID1, offset=7)),),
                                    chain((8, read(fid=FID1, length=50, offset=3)),),
                                    chain((0x12, struct.pack("<HBBI16s", 24, 1, 0, 0, FID1)),),
                                    chain((6, close(fid=FID1)),))
    yield "rename_delete", frames(chain((5, create("c.txt", disposition=2, access=0x110080)),
                                        (0x11, set_info(0x0A, struct.pack("<B7sQI", 1, b"\0" * 7, 0, 10) +
                                                        "d.txt".encode("utf-16-le"))),
                                        (0x11, set_info(0x0D, b"\x01")), (6, close())))
    yield "eof_alloc", frames(chain((5, create("e.txt", disposition=5)), (0x11, set_info(0x14, struct.pack("<Q", 9000))),
                                    (0x11, set_info(0x13, struct.pack("<Q", 100))), (7, struct.pack("<HHI16s", 24, 0, 0, RELATED)),
                                    (6, close())))
    yield "ioctls", frames(chain((5, create("a.txt")), (0x0B, ioctl(0x00140078)), (0x0B, ioctl(0x001401FC)),
                                 (0x0B, ioctl(0x00144064, struct.pack("<QQ", 0, 100))), (6, close())))
    yield "locks", frames(chain((5, create("a.txt", access=0x12019F)), (0x0A, lock(0, 10, 2)), (0x0A, lock(5, 10, 0x11)),
                                (0x0A, lock(0, 10, 4)), (6, close())))
    yield "echo_cancel", frames(chain((0x0D, struct.pack("<HH", 4, 0)),), chain((0x0C, struct.pack("<HH", 4, 0)),))
    yield "notify", frames(chain((5, create("dir", options=1, access=0x100081)),
                                 (0x0F, struct.pack("<HHI16sII", 32, 1, 4096, RELATED, 0x17, 0)), (6, close())))
    yield "streams", frames(chain((5, create("a.txt:s1:$DATA", disposition=3)), (6, close())),
                            chain((5, create("a.txt", ctx=contexts(context(b"DHnQ", b"\0" * 16),
                                                                     context(b"ExtA", b"\0" * 8)))), (6, close())))
    yield "tree_disconnect_logoff", frames(chain((4, struct.pack("<HH", 4, 0)),), chain((2, struct.pack("<HH", 4, 0)),))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
