#!/usr/bin/env python3
"""Runs `ringsmbctl ... user add NAME` on a pseudo-terminal and answers its
password prompts, to check that it asks twice and does not echo.

usage: pty_password.py FIRST SECOND RINGSMBCTL_ARGS...
Prints the terminal output; exits with ringsmbctl's status.
"""
import os
import pty
import sys
import time

first, second, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)

out = b""


def read_until(marker, start=0, timeout=10):
    global out
    end = time.time() + timeout
    while marker not in out[start:] and time.time() < end:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return marker in out[start:]


seen = 0
for answer in (first, second):
    if not read_until(b"password: ", seen):
        break
    seen = out.index(b"password: ", seen) + len(b"password: ")
    time.sleep(0.2)  # the no-echo mode is set right after the prompt
    os.write(fd, answer.encode() + b"\r")
    out += b"|"  # where an answer was typed, for the reader of the log
read_until(b"\x00", timeout=3)  # the rest, until ringsmbctl exits
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
