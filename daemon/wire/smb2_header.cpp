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

void store_header(uint8_t* dst, const Header& h) {
  store_le32(dst + hdr::ProtocolId, kProtocolIdSmb2);
  store_le16(dst + hdr::StructureSize, uint16_t(kHeaderSize));
  store_le16(dst + hdr::CreditCharge, h.credit_charge);
  store_le32(dst + hdr::Status, h.status);
  store_le16(dst + hdr::Command, uint16_t(h.command));
  store_le16(dst + hdr::CreditRequestResponse, h.credits);
  store_le32(dst + hdr::Flags, h.flags);
  store_le32(dst + hdr::NextCommand, h.next_command);
  store_le64(dst + hdr::MessageId, h.message_id);
  if (h.flags & SMB2_FLAGS_ASYNC_COMMAND) {
    store_le64(dst + hdr::AsyncId, h.async_id);
  } else {
    store_le32(dst + hdr::Reserved, 0);
    store_le32(dst + hdr::TreeId, h.tree_id);
  }
  store_le64(dst + hdr::SessionId, h.session_id);
  std::memcpy(dst + hdr::Signature, h.signature, sizeof h.signature);
}

void write_header(ByteWriter& w, const Header& h) {
  size_t at = w.size();
  w.zeros(kHeaderSize);
  store_header(w.buffer().data() + at, h);
}

}  // namespace ringsmb::wire
