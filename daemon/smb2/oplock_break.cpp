// SMB2 OPLOCK_BREAK acknowledgments (MS-SMB2 2.2.24.1, 2.2.24.2, 3.3.5.22).
//
// The server grants no oplocks and no leases yet, so it never sends a break
// notification and no acknowledgment can be expected:
//  - an oplock break acknowledgment (StructureSize 24) for an existing open
//    is answered STATUS_INVALID_OPLOCK_PROTOCOL (3.3.5.22.1: the open's
//    oplock is not breaking), STATUS_FILE_CLOSED when the open is unknown;
//  - a lease break acknowledgment (StructureSize 36) names a lease the
//    server does not hold: STATUS_OBJECT_NAME_NOT_FOUND (3.3.5.22.2).
// Note: the dispatch table must accept StructureSize 36 besides 24 for the
// lease form to reach this handler.
#include "smb2/dispatch.hpp"

namespace ringsmb::smb2 {
namespace {
constexpr uint16_t kOplockAckSize = 24;
constexpr uint16_t kLeaseAckSize = 36;
}  // namespace

NtStatus handle_oplock_break(Request& req, ByteWriter&) {
  ByteReader r(req.body);
  uint16_t size = r.u16();
  if (size == kLeaseAckSize) {
    r.skip(2);   // Reserved
    r.u32();     // Flags
    r.skip(16);  // LeaseKey
    r.u32();     // LeaseState
    r.u64();     // LeaseDuration
    if (!r.ok()) return NtStatus::InvalidParameter;
    return NtStatus::ObjectNameNotFound;
  }
  if (size != kOplockAckSize) return NtStatus::InvalidParameter;
  uint8_t level = r.u8();
  r.skip(5);  // Reserved, Reserved2
  FileId id{r.u64(), r.u64()};
  if (!r.ok()) return NtStatus::InvalidParameter;
  (void)level;
  if (!req.find_open(id)) return NtStatus::FileClosed;
  return NtStatus::InvalidOplockProtocol;
}

}  // namespace ringsmb::smb2
