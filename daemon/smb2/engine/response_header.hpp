// The header of every response the server sends (MS-SMB2 2.2.1) and the
// ERROR response body (2.2.2), each built here only: the processor's
// responses, a waiting request's interim and final ones, break
// notifications, the answer to an SMB1 NEGOTIATE.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {

struct ResponseFields {
  wire::Command command = wire::Command::Negotiate;
  NtStatus status = NtStatus::Success;
  uint64_t message_id = 0;
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  uint64_t async_id = 0;  // non-zero: the async form (SMB2_FLAGS_ASYNC_COMMAND), without TreeId
  uint16_t credit_charge = 0;
  uint16_t credits = 0;   // CreditResponse
  bool related = false;   // SMB2_FLAGS_RELATED_OPERATIONS, as its request had it
};

inline wire::Header response_header(const ResponseFields& f) {
  wire::Header h{};
  h.credit_charge = f.credit_charge;
  h.status = uint32_t(f.status);
  h.command = f.command;
  h.credits = f.credits;
  h.flags = wire::SMB2_FLAGS_SERVER_TO_REDIR;
  if (f.related) h.flags |= wire::SMB2_FLAGS_RELATED_OPERATIONS;
  if (f.async_id) {
    h.flags |= wire::SMB2_FLAGS_ASYNC_COMMAND;
    h.async_id = f.async_id;
  }
  h.message_id = f.message_id;
  h.tree_id = f.tree_id;
  h.session_id = f.session_id;
  return h;
}

// MS-SMB2 2.2.2 ERROR response body, without error contexts.
inline void write_error_body(ByteWriter& w) {
  w.u16(9);
  w.u8(0);   // ErrorContextCount
  w.u8(0);   // Reserved
  w.u32(0);  // ByteCount
  w.u8(0);   // ErrorData (one byte, as Windows sends)
}

}  // namespace ringsmb::smb2
