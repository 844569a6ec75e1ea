// SRV_COPYCHUNK_COPY (MS-SMB2 2.2.31.1) and the server-side copy limits
// (MS-SMB2 3.3.3: ServerSideCopyMaxNumberofChunks, ...MaxChunkSize,
// ...MaxDataSize; the values are Windows' defaults), for fsctl_copychunk.cpp
// and its unit tests.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::smb2 {

inline constexpr uint32_t kMaxChunks = 256;
inline constexpr uint32_t kMaxChunkSize = 1024 * 1024;
inline constexpr uint32_t kMaxDataSize = 16 * 1024 * 1024;
inline constexpr size_t kCopychunkRangeSize = 24;  // SRV_COPYCHUNK

struct CopychunkRange {
  uint64_t source_offset = 0;
  uint64_t target_offset = 0;
  uint32_t length = 0;
};

struct CopychunkCopy {
  std::array<uint8_t, 24> source_key{};
  uint32_t chunk_count = 0;
  std::vector<CopychunkRange> chunks;  // read only when ChunkCount is within the limit
  bool complete = false;               // the input held all ChunkCount chunks
};

// nullopt when even SourceKey and ChunkCount are missing.
std::optional<CopychunkCopy> parse_copychunk_copy(ByteSpan input);
// False when the request must get STATUS_INVALID_PARAMETER with the limits
// (3.3.5.15.6): chunks missing from the input, too many chunks, a chunk
// empty or larger than kMaxChunkSize, more than kMaxDataSize in all.
bool copychunk_within_limits(const CopychunkCopy& copy);

}  // namespace ringsmb::smb2
