#!/usr/bin/env python3
"""Named streams between users, and one request that could hold a worker.

usage: stream_guards.py PORT SHARE OWNER OWNER_PASS OTHER OTHER_PASS guards
         OWNER owns f.txt (0644), g.txt (0666) and h.txt (0600) in SHARE;
         OTHER is another ordinary user. Checks that OTHER can neither
         create, overwrite, truncate, rename nor delete a stream of a file
         it cannot write, nor read one of a file it cannot read, and that
         OWNER (and OTHER on the 0666 file) can.
       stream_guards.py PORT SHARE OWNER OWNER_PASS - - stall LIMIT
         LIMIT: the server's "max stream size". A stream's EndOfFile past
         it is refused; a stream of LIMIT bytes renamed onto the file's
         unnamed data stream (a copy of LIMIT bytes) does not hold up
         another connection's ECHO (same worker: run with "workers = 1")
         for 100 ms or more.
       stream_guards.py PORT SHARE USER PASS - - put NAME SIZE
         writes SIZE bytes to NAME (a stream) in 64 KiB WRITEs; prints
         "put=STATUS" (the first failure)
       stream_guards.py PORT SHARE USER PASS - - del NAME
         deletes NAME (delete on close); prints "del=STATUS"
Prints PASS:/FAIL: lines (put: the status line).
"""
import struct
import sys
import threading
import time

import smb2user

FILE_READ_DATA, FILE_WRITE_DATA, FILE_READ_ATTRIBUTES = 0x1, 0x2, 0x80
DELETE = 0x00010000
READ = FILE_READ_DATA | FILE_READ_ATTRIBUTES
READ_WRITE = READ | FILE_WRITE_DATA
FILE_DELETE_ON_CLOSE = 0x1000
SUPERSEDE, OPEN, CREATE, OPEN_IF, OVERWRITE, OVERWRITE_IF = 0, 1, 2, 3, 4, 5
FILE_RENAME_INFORMATION, FILE_END_OF_FILE_INFORMATION = 10, 20
SUCCESS, ACCESS_DENIED, NOT_FOUND, DISK_FULL = 0, 0xC0000022, 0xC0000034, 0xC000007F
STATUS_PENDING = 0x00000103
SMB2_ECHO, SMB2_SET_INFO = 13, 17
failures = 0
smb2user.STATUS_NAMES.setdefault(DISK_FULL, "DISK_FULL")


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print(("PASS: " if ok else "FAIL: ") + name + (f" ({detail})" if detail and not ok else ""), flush=True)


def name_of(st):
    return smb2user.status_name(st)


def expect(what, st, wanted):
    check(f"{what}: {name_of(wanted)}", st == wanted, f"got {name_of(st)}")


def rename_info(new_name, replace=False):
    encoded = new_name.encode("utf-16-le")
    return struct.pack("<B7xQI", int(replace), 0, len(encoded)) + encoded  # FILE_RENAME_INFORMATION_TYPE_2


def eof_info(size):
    return struct.pack("<Q", size)


def read_all(c, name):
    st, fid = c.create(name, READ)
    if st != SUCCESS:
        return None
    st, data = c.read_fid(fid, 65536)
    c.close(fid)
    return data if st == SUCCESS else b""


def put_stream(c, name, data, access=READ_WRITE):
    st, fid = c.create(name, access, disposition=OPEN_IF)
    if st == SUCCESS:
        st = c.write(fid, data)
        c.close(fid)
    return st


def other_cannot_change(x, o):
    st, fid = x.create("f.txt:new", READ, disposition=OPEN_IF)
    expect("other: a new stream on the owner's 0644 file (read access, OPEN_IF)", st, ACCESS_DENIED)
    st, fid = x.create("f.txt:new", READ, disposition=CREATE)
    expect("other: ... with FILE_CREATE", st, ACCESS_DENIED)
    st, fid = x.create("f.txt:new", READ_WRITE, disposition=OPEN_IF)
    expect("other: ... asking for write access", st, ACCESS_DENIED)
    expect("owner: no such stream was made", o.create("f.txt:new", READ)[0], NOT_FOUND)
    for disposition, label in ((OVERWRITE_IF, "OVERWRITE_IF"), (OVERWRITE, "OVERWRITE"), (SUPERSEDE, "SUPERSEDE")):
        st, fid = x.create("f.txt:s", READ, disposition=disposition)
        expect(f"other: {label} of the owner's stream with read access", st, ACCESS_DENIED)
        if st == SUCCESS:
            x.close(fid)
    check("owner: the stream keeps its data", read_all(o, "f.txt:s") == b"owner data")
    st, fid = x.create("f.txt:s", READ)
    expect("other: reads the owner's stream of a 0644 file", st, SUCCESS)
    if st == SUCCESS:
        check("... its data", x.read_fid(fid, 100)[1] == b"owner data")
        expect("other: EndOfFile 0 through that read-only open",
               x.set_info(fid, FILE_END_OF_FILE_INFORMATION, eof_info(0)), ACCESS_DENIED)
        x.close(fid)
    st, fid = x.create("f.txt:s", DELETE | FILE_READ_ATTRIBUTES)
    if st == SUCCESS:
        st = x.set_info(fid, FILE_RENAME_INFORMATION, rename_info(":t"))
        x.close(fid)
    expect("other: rename of the owner's stream (DELETE)", st, ACCESS_DENIED)
    st, fid = x.create("f.txt:s", DELETE | FILE_READ_ATTRIBUTES, options=FILE_DELETE_ON_CLOSE)
    if st == SUCCESS:
        x.close(fid)
    expect("other: delete on close of the owner's stream", st, ACCESS_DENIED)
    check("owner: the stream is still there, under its name", read_all(o, "f.txt:s") == b"owner data")
    expect("owner: nothing under the other name", o.create("f.txt:t", READ)[0], NOT_FOUND)
    expect("other: a stream of a 0600 file is not readable", x.create("h.txt:s", READ)[0], ACCESS_DENIED)


def allowed_changes(x, o):
    expect("other: a stream on the owner's 0666 file", put_stream(x, "g.txt:x", b"other data"), SUCCESS)
    check("... reads back", read_all(o, "g.txt:x") == b"other data")
    st, fid = o.create("f.txt:s2", READ, disposition=OPEN_IF)
    expect("owner: a new stream with read access (write access to the file suffices)", st, SUCCESS)
    if st == SUCCESS:
        o.close(fid)
    expect("owner: writes it", put_stream(o, "f.txt:s2", b"second"), SUCCESS)
    st, fid = o.create("f.txt:s2", READ, disposition=OVERWRITE_IF)
    expect("owner: OVERWRITE_IF of the own stream", st, SUCCESS)
    if st == SUCCESS:
        o.close(fid)
    check("... emptied it", read_all(o, "f.txt:s2") == b"")
    st, fid = o.create("f.txt:s2", DELETE | FILE_READ_ATTRIBUTES)
    if st == SUCCESS:
        st = o.set_info(fid, FILE_RENAME_INFORMATION, rename_info(":s3"))
        o.close(fid)
    expect("owner: renames the own stream", st, SUCCESS)
    check("... under the new name", read_all(o, "f.txt:s3") == b"")


def guards(share, owner, owner_pw, other, other_pw):
    o = smb2user.logged_in(owner, owner_pw, share)
    x = smb2user.logged_in(other, other_pw, share)
    expect("owner: a stream of the own 0644 file", put_stream(o, "f.txt:s", b"owner data"), SUCCESS)
    expect("owner: a stream of the own 0600 file", put_stream(o, "h.txt:s", b"secret"), SUCCESS)
    other_cannot_change(x, o)
    allowed_changes(x, o)


def final_status(c):
    """The final response's status (an interim STATUS_PENDING skipped)."""
    while True:
        r = c.recv_frame()
        if r is None:
            return None
        status, flags = struct.unpack_from("<I", r, 8)[0], struct.unpack_from("<I", r, 16)[0]
        if status == STATUS_PENDING and flags & 0x2:
            continue
        return status


def echo_rtts(e, until):
    """ECHO round trips on E until UNTIL is set; their durations (s)."""
    rtts = []
    while not until.is_set() or not rtts:
        t0 = time.monotonic()
        st, _ = e.request(SMB2_ECHO, struct.pack("<HH", 4, 0))
        rtts.append(time.monotonic() - t0)
        if st != SUCCESS:
            break
        time.sleep(0.002)
    return rtts


def stall(share, owner, owner_pw, limit):
    o = smb2user.logged_in(owner, owner_pw, share)
    e = smb2user.logged_in(owner, owner_pw, share)
    st, fid = o.create("big.txt", READ_WRITE, disposition=OVERWRITE_IF)
    expect("an empty file", st, SUCCESS)
    o.close(fid)
    st, fid = o.create("big.txt:b", READ_WRITE | DELETE, disposition=OPEN_IF)
    expect("its stream", st, SUCCESS)
    expect("EndOfFile 2 GiB on the stream is refused",
           o.set_info(fid, FILE_END_OF_FILE_INFORMATION, eof_info(2 << 30)), DISK_FULL)
    expect("EndOfFile past the limit is refused", o.set_info(fid, FILE_END_OF_FILE_INFORMATION, eof_info(limit + 1)),
           DISK_FULL)
    expect("a WRITE past the limit is refused", o.write(fid, b"x", limit), DISK_FULL)
    expect("EndOfFile at the limit", o.set_info(fid, FILE_END_OF_FILE_INFORMATION, eof_info(limit)), SUCCESS)
    expect("its last bytes", o.write(fid, b"tail", limit - 4), SUCCESS)
    done = threading.Event()
    outcome = {}

    def rename():
        body = rename_info("::$DATA")
        t0 = time.monotonic()
        o.send_frame(o.header(SMB2_SET_INFO) +
                     struct.pack("<HBBIHHI", 33, 1, FILE_RENAME_INFORMATION, len(body), 64 + 32, 0, 0) + fid + body)
        outcome["status"] = final_status(o)
        outcome["seconds"] = time.monotonic() - t0
        done.set()

    worker = threading.Thread(target=rename)
    e.request(SMB2_ECHO, struct.pack("<HH", 4, 0))
    worker.start()
    rtts = echo_rtts(e, done)
    worker.join()
    expect(f"rename of the {limit >> 20} MiB stream onto ::$DATA ({outcome.get('seconds', 0) * 1000:.0f} ms)",
           outcome.get("status"), SUCCESS)
    worst = max(rtts) * 1000
    check(f"meanwhile another connection's ECHO answered within 100 ms ({len(rtts)} ECHOs, worst {worst:.1f} ms)",
          worst < 100)
    o.close(fid)
    st, fid = o.create("big.txt", READ)
    if st == SUCCESS:
        check("the file's data is the stream's", o.read_fid(fid, 4, limit - 4)[1] == b"tail")
        o.close(fid)
    expect("the stream is gone", o.create("big.txt:b", READ)[0], NOT_FOUND)


def put(share, user, password, name, size):
    c = smb2user.logged_in(user, password, share)
    st, fid = c.create(name, READ_WRITE, disposition=OPEN_IF)
    if st == SUCCESS:
        chunk = b"s" * 65536
        for offset in range(0, size, len(chunk)):
            st = c.write(fid, chunk[:min(len(chunk), size - offset)], offset)
            if st != SUCCESS:
                break
        c.close(fid)
    print(f"put={name_of(st)}")


def delete(share, user, password, name):
    c = smb2user.logged_in(user, password, share)
    st, fid = c.create(name, DELETE | FILE_READ_ATTRIBUTES, options=FILE_DELETE_ON_CLOSE)
    if st == SUCCESS:
        st = c.close(fid)
    print(f"del={name_of(st)}")


def main():
    _, _port, share, owner, owner_pw, other, other_pw, what, *args = sys.argv
    if what == "guards":
        guards(share, owner, owner_pw, other, other_pw)
    elif what == "stall":
        stall(share, owner, owner_pw, int(args[0]))
    elif what == "put":
        return put(share, owner, owner_pw, args[0], int(args[1]))
    elif what == "del":
        return delete(share, owner, owner_pw, args[0])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
