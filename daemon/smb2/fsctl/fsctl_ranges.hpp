// The allocated ranges of a file (FSCTL_QUERY_ALLOCATED_RANGES), from
// SEEK_DATA / SEEK_HOLE; separate so unit tests can run it on real files.
#pragma once

#include <cstdint>
#include <vector>

namespace ringsmb::smb2 {

struct ByteRange64 {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const ByteRange64&) const = default;
};

// The data ranges of `fd` within [offset, offset + length), clipped to
// `size` (the file's EOF). A filesystem without SEEK_DATA reports the whole
// range as data.
std::vector<ByteRange64> allocated_ranges(int fd, uint64_t offset, uint64_t length, uint64_t size);

}  // namespace ringsmb::smb2
