// Whole-buffer writes on a descriptor, as the SMB2 layer and the stream
// sidecars need them.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

// pwrite of all of DATA at OFFSET, again after EINTR and short writes; DONE
// (when given) counts what was written, also on an error.
inline NtStatus pwrite_all(int fd, uint64_t offset, ByteSpan data, size_t* done = nullptr) {
  size_t n = 0;
  NtStatus status = NtStatus::Success;
  while (n < data.size()) {
    ssize_t w = pwrite(fd, data.data() + n, data.size() - n, off_t(offset + n));
    if (w < 0) {
      if (errno == EINTR) continue;
      status = nt_status_from_errno(errno);
      break;
    }
    n += size_t(w);
  }
  if (done) *done = n;
  return status;
}

}  // namespace ringsmb::vfs
