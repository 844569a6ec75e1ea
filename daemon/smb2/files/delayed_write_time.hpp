// The delayed LastWriteTime update after a WRITE, as Windows Server 2016
// and Samba 4.17 do it (smb2.timestamps.delayed-*): MS-FSA 2.1.5.4 lets the
// object store choose when LastModificationTime follows a write, and
// Windows updates it once, about 2 s after the first write through a
// handle; later writes through that handle show only at its CLOSE, which
// sets the time. FLUSH and SET_INFO (Basic, EndOfFile, Allocation) bring a
// pending update forward.
//
// Linux moves the mtime at every write, so the time a query through the
// handle shows is held in the Open (state::DelayedWriteTime) instead of
// put back on disk: the disk always has the kernel's time of the last
// write, except that CLOSE of a handle written after its update sets the
// close time, and a query that finds the update did not move the kernel's
// coarse mtime sets the current time (the file was created and written in
// the same clock tick).
//
// Cost on the WRITE path: one monotonic clock read (vDSO, no system call)
// for the first writes through a handle within 2 s; nothing for writes
// after. One fstat only for a handle written again after its update (once
// per handle). Other opens, directory listings and path queries show the
// file's own time: the hold is per open, not per file as on Windows.
#pragma once

#include "state/session.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

inline constexpr int64_t kWriteTimeUpdateDelayMs = 2000;

// Before a WRITE through OPEN (a file's data, not a named stream's).
void note_write(state::Open& open);
// A query through OPEN: sets the LastWriteTime of ST (the file's stat) to
// what the handle shows.
void show_write_time(state::Open& open, vfs::FileStat& st);
// FLUSH, or SET_INFO Basic / EndOfFile / Allocation through OPEN: a pending
// update happens now.
void update_write_time_now(state::Open& open);
// SET_INFO Basic set LastWriteTime to TIME through OPEN: it shows as set.
void write_time_was_set(state::Open& open, uint64_t time);
// CLOSE of OPEN, before its final stat: writes after the update get the
// close time; a pending update shows the file's own time (no hold).
void write_time_at_close(state::Open& open);
// CREATE: the file's LastWriteTime as the open starts.
inline void write_time_seen(state::Open& open, uint64_t last_write_time) {
  open.write_time.last_seen = last_write_time;
}

}  // namespace ringsmb::smb2
