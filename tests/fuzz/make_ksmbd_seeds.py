#!/usr/bin/env python3
"""Seeds for fuzz_ksmbd_shim: one well-formed request of each event ksmbd.ko
sends (the layouts of kmod-shim/ksmbd_abi.hpp), each both as a direct event
(mode byte 1) and framed as a netlink datagram (mode byte 0, family 0x20).
usage: make_ksmbd_seeds.py CORPUS_DIR"""
import os
import struct
import sys


def fixed(text, size):
    return text.encode().ljust(size, b"\0")[:size]


def login(handle, account):
    return struct.pack("<I", handle) + fixed(account, 48) + bytes(64)


def share(handle, name):
    return struct.pack("<I", handle) + fixed(name, 64) + bytes(64)


def tree(handle, account, name, flags=1):
    return (struct.pack("<IHHQQ", handle, flags, 2, 7, 9) + fixed(account, 48) + fixed(name, 64)
            + fixed("192.0.2.7", 64) + bytes(64))


def rpc(handle, flags, payload=b""):
    return struct.pack("<III", handle, flags, len(payload)) + payload


# DCE/RPC bind to srvsvc (v3.0, NDR): what a client writes first on the pipe.
BIND = bytes.fromhex(
    "05000b0310000000480000000100000000100010000000000100000000000100"
    "c84f324b7016d30112785a47bf6ee18803000000045d888aeb1cc9119fe808002b10486002000000")

EVENTS = [
    (4, login(1, "alice")), (4, login(2, "nobody-here")),
    (6, share(3, "data")), (6, share(4, "ipc$")), (6, share(5, "docs")), (6, share(6, "none")),
    (8, tree(7, "alice", "data")), (8, tree(8, "alice", "docs")), (8, tree(9, "guest", "ipc$", 0x10)),
    (12, rpc(10, 1 << 4 | 1 << 1)), (12, rpc(10, 1 << 5, BIND)), (12, rpc(10, 1 << 6 | 1)),
    (12, rpc(10, 1 << 3 | 1, BIND)), (12, rpc(10, 1 << 7)),
    (14, struct.pack("<IH", 11, 4) + b"\x60\x02\x05\x00"),
    (1, struct.pack("<I", 12)), (10, bytes(80)), (11, fixed("alice", 48) + bytes(68)),
]


def datagram(event, payload, family=0x20):
    attr = struct.pack("<HH", 4 + len(payload), event) + payload
    attr += bytes(-len(attr) % 4)
    body = struct.pack("<BBH", event, 1, 0) + attr
    return struct.pack("<IHHII", 16 + len(body), family, 0, 0, 0) + body


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, (event, payload) in enumerate(EVENTS):
        with open(os.path.join(out, f"seed-event-{i:02d}"), "wb") as f:
            f.write(bytes([1, event]) + payload)
        with open(os.path.join(out, f"seed-datagram-{i:02d}"), "wb") as f:
            f.write(bytes([0]) + datagram(event, payload))


if __name__ == "__main__":
    main()
