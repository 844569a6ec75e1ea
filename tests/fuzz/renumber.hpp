// Shared by the SMB2 fuzz targets (fuzz_smb2_frame, fuzz_transform).
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/bytes.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::fuzz {

// Gives every element of the chain in `frame` the next message id, so the
// credit window accepts it.
void renumber(Bytes& frame, uint64_t& next_mid) {
  size_t off = 0;
  while (frame.size() - off >= wire::kHeaderSize && load_le32(frame.data() + off) == wire::kProtocolIdSmb2) {
    uint16_t charge = std::max<uint16_t>(load_le16(frame.data() + off + wire::hdr::CreditCharge), 1);
    store_le64(frame.data() + off + wire::hdr::MessageId, next_mid);
    next_mid += charge;
    uint32_t next = load_le32(frame.data() + off + wire::hdr::NextCommand);
    if (next == 0 || next > frame.size() - off) break;
    off += next;
  }
}

}  // namespace ringsmb::fuzz
