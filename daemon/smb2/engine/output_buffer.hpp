// The response shape QUERY_DIRECTORY and QUERY_INFO share (MS-SMB2 2.2.34,
// 2.2.38): StructureSize 9, OutputBufferOffset (from the header start),
// OutputBufferLength, then the buffer itself.
#pragma once

#include "common/bytes.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {

// The buffer follows the 8-byte fixed part: 64 + 8 = 72 from the header.
inline constexpr uint16_t kOutputBufferOffset = wire::kHeaderSize + 8;

class OutputBufferResponse {
 public:
  // Writes the fixed part; the writer must be positioned right after the header.
  explicit OutputBufferResponse(ByteWriter& w) : w_(w), start_(w.size()) {
    w_.u16(9);
    w_.u16(kOutputBufferOffset);
    w_.u32(0);  // OutputBufferLength, patched by finish()
  }
  // Where the output buffer begins in the writer's buffer.
  size_t data_start() const { return start_ + 8; }
  // Patches OutputBufferLength; an empty buffer still carries one byte, as
  // the fixed StructureSize 9 counts it.
  void finish() {
    size_t len = w_.size() - data_start();
    w_.patch_u32(start_ + 4, uint32_t(len));
    if (len == 0) w_.u8(0);
  }
  // Drops everything written, e.g. before returning an error status.
  void discard() { w_.buffer().resize(start_); }

 private:
  ByteWriter& w_;
  size_t start_;
};

}  // namespace ringsmb::smb2
