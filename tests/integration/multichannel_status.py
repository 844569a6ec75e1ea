#!/usr/bin/env python3
"""What `ringsmbctl status` shows of a multichannel session: the session
with 2 channels (each the client's address and TCP port) while a second
connection is bound to it, in the text, JSON and Prometheus outputs, and
1 channel once that connection is gone.

usage: multichannel_status.py PORT SHARE USER PASS RINGSMBCTL CONFIG
Prints PASS/FAIL lines and 'N passed, N failed' last; exits 1 on a failure.
"""
import json
import subprocess
import sys
import time

import rawsmb
from multichannel_probe import SUCCESS, bind, connection, name, owner_login


def ctl(*args):
    _, _, _, _, _, ringsmbctl, config = sys.argv
    return subprocess.run([ringsmbctl, "--config", config, *args], capture_output=True, text=True, timeout=30).stdout


def channels_of(session_id):
    """The session's channels in `status --json` (None when it is not listed)."""
    for s in json.loads(ctl("status", "--json"))["sessions"]:
        if s["session_id"] == f"0x{session_id:016x}":
            return s["channels"]
    return None


def wait_for_channels(session_id, count):
    for _ in range(50):
        got = channels_of(session_id)
        if got is not None and len(got) == count:
            return got
        time.sleep(0.1)
    return channels_of(session_id)


def local_end(c):
    host, port = c.s.getsockname()[:2]
    return f"{host}:{port}"


def channel_metric(user):
    for line in ctl("status", "--prometheus").splitlines():
        if line.startswith(f'ringsmb_channels{{user="{user}"}} '):
            return int(float(line.split()[1]))
    return None


def main():
    _, _, share, user, password, _, _ = sys.argv
    owner = owner_login(user, password, share)
    got = wait_for_channels(owner.session, 1)
    rawsmb.check("one connection: its session has 1 channel, the client's address and port",
                 got is not None and [c["client"] for c in got] == [local_end(owner)], repr(got))

    second = connection()
    st = bind(second, owner, user, password)
    rawsmb.check("a second connection binds to the session", st == SUCCESS, name(st))
    got = wait_for_channels(owner.session, 2)
    want = [local_end(owner), local_end(second)]
    rawsmb.check("status --json: 2 channels, the first one first", got is not None and
                 [c["client"] for c in got] == want, f"{got} != {want}")
    conns = {c["id"] for c in json.loads(ctl("status", "--json"))["connections"]}
    rawsmb.check("... whose connection ids are those of the connection list",
                 got is not None and {c["connection_id"] for c in got} <= conns, f"{got} {conns}")
    text = ctl("status")
    sessions = text.split("\nSessions:")[1].split("\n\n")[0].splitlines()
    session_row = [ln for ln in sessions if ln.startswith(f"  0x{owner.session:016x}  ")]
    rawsmb.check("status: the session's row counts 2 channels",
                 len(session_row) == 1 and session_row[0].split()[-1] == "2", repr(session_row))
    rawsmb.check("status: the channel list shows each client address:port",
                 "Channels: 2" in text and all(w in text for w in want), text)
    rawsmb.check("status --prometheus: ringsmb_channels 2", channel_metric(user) == 2, str(channel_metric(user)))

    second.abort()
    got = wait_for_channels(owner.session, 1)
    rawsmb.check("after the second connection drops: 1 channel, the first",
                 got is not None and [c["client"] for c in got] == [local_end(owner)], repr(got))
    rawsmb.check("status --prometheus: ringsmb_channels 1", channel_metric(user) == 1, str(channel_metric(user)))

    print(f"{rawsmb.results['pass']} passed, {rawsmb.results['fail']} failed")
    sys.exit(1 if rawsmb.results["fail"] else 0)


if __name__ == "__main__":
    main()
