// Whether a directory holds anything: a rename over a directory
// (SET_INFO FileRenameInformation) and a symlink replacing one
// (FSCTL_SET_REPARSE_POINT) both need to know.
#pragma once

#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

// Is the directory behind `fd` empty ("." and ".." aside)? Reads it
// through a descriptor of its own, so `fd`'s position is untouched; the
// status of the failed open otherwise.
Result<bool> directory_empty(int fd);

}  // namespace ringsmb::vfs
