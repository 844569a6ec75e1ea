#include "wire/smb2_header.hpp"

#include <cstring>

namespace ringsmb::wire {

bool parse_header(ByteSpan pdu, Header& h) {
  ByteReader r(pdu);
  if (r.u32() != kProtocolIdSmb2) return false;
  if (r.u16() != kHeaderSize) return false;
  h.credit_charge = r.u16();
  h.status = r.u32();
  h.command = Command(r.u16());
  h.credits = r.u16();
  h.flags = r.u32();
  h.next_command = r.u32();
  h.message_id = r.u64();
  if (h.flags & SMB2_FLAGS_ASYNC_COMMAND) {
    h.async_id = r.u64();
    h.tree_id = 0;
  } else {
    r.u32();  // Reserved
    h.tree_id = r.u32();
    h.async_id = 0;
  }
  h.session_id = r.u64();
  ByteSpan sig = r.bytes(16);
  if (!r.ok()) return false;
  std::memcpy(h.signature, sig.data(), 16);
  return true;
}

void write_header(ByteWriter& w, const Header& h) {
  w.u32(kProtocolIdSmb2);
  w.u16(kHeaderSize);
  w.u16(h.credit_charge);
  w.u32(h.status);
  w.u16(uint16_t(h.command));
  w.u16(h.credits);
  w.u32(h.flags);
  w.u32(h.next_command);
  w.u64(h.message_id);
  if (h.flags & SMB2_FLAGS_ASYNC_COMMAND) {
    w.u64(h.async_id);
  } else {
    w.u32(0);
    w.u32(h.tree_id);
  }
  w.u64(h.session_id);
  w.bytes(h.signature, 16);
}

}  // namespace ringsmb::wire
