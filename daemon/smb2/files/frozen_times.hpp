// The "stop updating" value of FILE_BASIC_INFORMATION (MS-FSCC 2.4.7,
// MS-FSA 2.1.5.14.2): LastWriteTime set to -1 through a handle keeps the
// file's LastWriteTime through later writes by that handle, until -2 (or
// the handle's close). Linux updates the mtime on every write, so a write
// through such a handle puts the frozen time back (one futimens, only for
// frozen handles). ChangeTime and LastAccessTime accept -1/-2 and are not
// frozen: the kernel owns the ctime, and SMB reads do not set the atime.
#pragma once

#include <sys/stat.h>

#include <cerrno>

#include "common/ntstatus.hpp"
#include "state/session.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

// After a write, truncation or copy through `open`.
inline void restore_frozen_times(const state::Open& open) {
  if (!open.frozen_write_time) return;
  struct timespec ts[2] = {{0, UTIME_OMIT}, vfs::filetime_to_timespec(*open.frozen_write_time)};
  futimens(open.fd.get(), ts);
}

}  // namespace ringsmb::smb2
