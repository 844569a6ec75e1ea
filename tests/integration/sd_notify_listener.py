#!/usr/bin/env python3
"""Plays systemd for ringsmbd: binds a NOTIFY_SOCKET, starts ringsmbd with
it (and WATCHDOG_USEC), and reports what arrives as "OK ..." / "FAIL ..."
lines: READY=1 only once the port accepts connections, STATUS= lines,
periodic WATCHDOG=1, RELOADING=1 + READY=1 around SIGHUP, STOPPING=1 on
SIGTERM, and every datagram from ringsmbd's own pid.

usage: sd_notify_listener.py SOCKET_PATH PORT RINGSMBD_ARGS...
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sock_path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
failures = 0


def report(ok, what):
    global failures
    print(("OK " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures += 1


s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="1000000")
env.pop("WATCHDOG_PID", None)
log = open(os.path.join(os.path.dirname(sock_path), "server.log"), "wb")
proc = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
messages = []  # (time, pid, text)


def port_open():
    c = socket.socket()
    c.settimeout(0.5)
    try:
        return c.connect_ex(("127.0.0.1", port)) == 0
    finally:
        c.close()


def receive(until, want):
    """Collects datagrams until WANT(text) is true or UNTIL passes; returns the matching text."""
    while time.time() < until:
        s.settimeout(max(0.01, until - time.time()))
        try:
            data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
        except socket.timeout:
            break
        pid = None
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("=iII", payload[:12])[0]
        text = data.decode()
        messages.append((time.time(), pid, text))
        if want(text):
            return text
    return None


ready = receive(time.time() + 20, lambda t: "READY=1" in t.split("\n"))
report(ready is not None, "READY=1 arrived")
report(ready is not None and port_open(), "the port accepts connections when READY=1 arrives")
report(any(t.startswith("STATUS=") or "\nSTATUS=" in t for _, _, t in messages), "STATUS= lines")
report(ready is not None and "STATUS=serving" in ready, "READY=1 comes with a serving STATUS")

before = len([m for m in messages if m[2] == "WATCHDOG=1"])
receive(time.time() + 2.5, lambda t: False)
pings = len([m for m in messages if m[2] == "WATCHDOG=1"]) - before
report(pings >= 3, "WATCHDOG=1 every half interval (%d pings in 2.5 s at WATCHDOG_USEC=1s)" % pings)

proc.send_signal(signal.SIGHUP)
reloading = receive(time.time() + 10, lambda t: "RELOADING=1" in t.split("\n"))
report(reloading is not None, "RELOADING=1 on SIGHUP")
again = receive(time.time() + 10, lambda t: "READY=1" in t.split("\n"))
report(again is not None, "READY=1 after the reload")

proc.send_signal(signal.SIGTERM)
stopping = receive(time.time() + 10, lambda t: "STOPPING=1" in t.split("\n"))
report(stopping is not None, "STOPPING=1 on SIGTERM")
try:
    rc = proc.wait(timeout=20)
except subprocess.TimeoutExpired:
    proc.kill()
    rc = -1
report(rc == 0, "ringsmbd exited cleanly (status %s)" % rc)
senders = {pid for _, pid, _ in messages}
report(senders == {proc.pid}, "every datagram came from ringsmbd itself (senders %s, ringsmbd %d)" % (senders, proc.pid))
sys.exit(1 if failures else 0)
