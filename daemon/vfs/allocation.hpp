// Reserving disk space for a file ahead of its data: FileAllocationInformation
// (SET_INFO) and the SMB2_CREATE_ALLOCATION_SIZE create context both end here.
#pragma once

#include <cstdint>

#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

// Reserves `size` bytes for the file open as `fd` without changing its size
// (fallocate FALLOC_FL_KEEP_SIZE). A reservation happens at once, unlike
// writing the same amount, so one request could take the whole disk from
// every other user of it: one that would leave less than 5% of the
// filesystem free fails with DiskFull, as a full disk would (the client can
// still write that data). A filesystem that cannot preallocate treats the
// size as a hint (Success). `size` at or below what is allocated already
// changes nothing.
NtStatus reserve_allocation(int fd, uint64_t size);

}  // namespace ringsmb::vfs
