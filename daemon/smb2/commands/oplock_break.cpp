// SMB2 OPLOCK_BREAK acknowledgments (MS-SMB2 2.2.24.1, 2.2.24.2, 2.2.25,
// 3.3.5.22): the client accepts the lower oplock level or lease state a
// break notification offered; CREATEs waiting for that break run again.
#include "smb2/commands/handlers.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/leases/lease.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint16_t kOplockAckSize = 24;
constexpr uint16_t kLeaseAckSize = 36;

// 3.3.5.22.2 Processing a Lease Acknowledgment.
NtStatus ack_lease(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);   // StructureSize
  r.skip(2);   // Reserved
  r.u32();     // Flags
  state::Guid key{};
  ByteSpan k = r.bytes(16);
  uint32_t lease_state = r.u32();
  r.u64();     // LeaseDuration
  if (!r.ok()) return NtStatus::InvalidParameter;
  std::copy(k.begin(), k.end(), key.begin());
  auto lease = req.server.leases.find(req.conn.client_guid, key);
  if (!lease || lease->is_oplock) return NtStatus::ObjectNameNotFound;
  std::vector<state::Waiter> wake;
  std::vector<state::BreakNotice> further;  // queued behind this break (smb2.lease.breaking3)
  NtStatus st = req.server.files.ack_lease(lease, lease_state, wake, further, monotonic_ms());
  post_breaks(req.server, further);  // before the waiters run again: their answers follow the break
  post_wakeups(req.server, wake);
  if (st != NtStatus::Success) return st;
  w.u16(kLeaseAckSize);
  w.u16(0);
  w.u32(0);  // Flags
  w.bytes(key.data(), key.size());
  w.u32(lease_state);
  w.u64(0);  // LeaseDuration
  return NtStatus::Success;
}

// 3.3.5.22.1 Processing an Oplock Acknowledgment.
NtStatus ack_oplock(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint8_t level = r.u8();
  r.skip(5);  // Reserved, Reserved2
  r.skip(16);  // FileId: Request::open
  if (!r.ok()) return NtStatus::InvalidParameter;
  state::Open* open = req.open;
  if (!open->node) return NtStatus::InvalidDeviceState;
  std::vector<state::Waiter> wake;
  std::vector<state::BreakNotice> further;
  auto granted = req.server.files.ack_oplock(open->node, open, level, wake, further, monotonic_ms());
  post_breaks(req.server, further);
  post_wakeups(req.server, wake);
  if (!granted) {
    if (granted.error() == NtStatus::InvalidOplockProtocol) open->oplock_level = state::kOplockNone;
    return granted.error();
  }
  open->oplock_level = *granted;
  w.u16(kOplockAckSize);
  w.u8(*granted);
  w.u8(0);
  w.u32(0);
  FileId id = req.body_file_id();
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  return NtStatus::Success;
}

}  // namespace

NtStatus handle_oplock_break(Request& req, ByteWriter& w) {
  uint16_t size = load_le16(req.body.data());
  if (size == kLeaseAckSize) return ack_lease(req, w);
  if (size == kOplockAckSize) return ack_oplock(req, w);
  return NtStatus::InvalidParameter;
}

}  // namespace ringsmb::smb2
