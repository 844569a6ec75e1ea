// The CREATE response (MS-SMB2 2.2.14) of an open that has no file times
// and no create contexts: a named pipe, the quota index.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::wire {

inline void write_plain_create_response(ByteWriter& w, uint64_t persistent_id, uint64_t volatile_id,
                                        uint64_t allocation_size, uint32_t attributes) {
  w.u16(89);  // StructureSize
  w.u8(0);    // OplockLevel: none
  w.u8(0);    // Flags
  w.u32(create::FILE_OPENED);
  w.zeros(32);  // Creation, LastAccess, LastWrite, Change times: none
  w.u64(allocation_size);
  w.u64(0);  // EndOfFile
  w.u32(attributes);
  w.u32(0);  // Reserved2
  w.u64(persistent_id);
  w.u64(volatile_id);
  w.u32(0);  // CreateContextsOffset
  w.u32(0);  // CreateContextsLength
  w.u8(0);   // the one-byte Buffer
}

}  // namespace ringsmb::wire
