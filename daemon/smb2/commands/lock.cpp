// SMB2 LOCK (MS-SMB2 2.2.26, 2.2.27, 3.3.5.14; MS-FSA 2.1.5.7, 2.1.5.8).
//
// Byte-range locks live in the server-wide state::LockTable. A blocking
// lock (one element without SMB2_LOCKFLAG_FAIL_IMMEDIATELY) that conflicts
// goes async (async_engine.hpp): the table queues it, and grants it, in
// arrival order, when the conflicting range is unlocked or its open closes,
// whichever connection or worker that happens on; the grant is posted to
// the waiter's connection, which sends the final response. CANCEL answers
// STATUS_CANCELLED; closing the waiting handle STATUS_RANGE_NOT_LOCKED (as
// Windows, smb2.lock.cancel). A blocking lock in the middle of a compound
// chain, where nothing may wait, is processed as FAIL_IMMEDIATELY.
//
// Lock sequence numbers (3.3.5.14) are checked for durable opens on SMB 3.x
// (resilient and persistent opens are not offered): a LOCK that repeats
// the last number of its index succeeds without being applied again.
// READ and WRITE check the locks through LockTable::check_io.
#include <vector>

#include "smb2/commands/handlers.hpp"
#include "smb2/commands/session_bind.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/locks/lock_grants.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint32_t {
  SMB2_LOCKFLAG_SHARED_LOCK = 0x01,
  SMB2_LOCKFLAG_EXCLUSIVE_LOCK = 0x02,
  SMB2_LOCKFLAG_UNLOCK = 0x04,
  SMB2_LOCKFLAG_FAIL_IMMEDIATELY = 0x10,
};
constexpr size_t kLockElementSize = 24;
constexpr size_t kLocksOffsetInBody = 24;

struct LockElement {
  uint64_t offset;
  uint64_t length;
  uint32_t flags;
};

// MS-FSA 2.1.5.7: a range whose last byte would lie beyond 2^64 - 1.
bool wraps(const LockElement& e) { return e.length != 0 && e.offset + (e.length - 1) < e.offset; }

// MS-SMB2 3.3.5.14.2: the flag combinations a lock request may carry.
bool valid_lock_flags(uint32_t flags, size_t count) {
  switch (flags) {
    case SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY:
    case SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY: return true;
    case SMB2_LOCKFLAG_SHARED_LOCK:
    case SMB2_LOCKFLAG_EXCLUSIVE_LOCK: return count == 1;  // a blocking lock must be alone
    default: return false;
  }
}

// MS-SMB2 3.3.5.14: the entry of Open.LockSequenceArray this LOCK names,
// or null when none applies (not durable, SMB 2.x, index 0 or past 64).
struct LockSequenceSlot {
  state::LockSequences* array = nullptr;
  size_t index = 0;
  uint8_t number = 0;
  bool replayed() const { return array && array->valid[index] && array->number[index] == number; }
  void record() const {
    if (!array) return;
    array->number[index] = number;
    array->valid[index] = true;
  }
};

LockSequenceSlot lock_sequence_slot(const Request& req, state::Open& open, uint32_t lock_sequence) {
  uint32_t index = lock_sequence >> 4;  // LockSequenceIndex: the upper 28 bits
  // Durable opens from 3.x on; resilient ones (FSCTL_LMR_REQUEST_RESILIENCY) from 2.1 on;
  // any open of a connection that was offered multichannel (its replays may come on another channel).
  if (index < 1 || index > 64) return {};
  if (!open.lock_sequences && (req.conn.server_capabilities & kMultiChannelCapability))
    open.lock_sequences = std::make_unique<state::LockSequences>();
  if (!open.lock_sequences || !(req.conn.is_smb3() || open.resilient)) return {};
  return {open.lock_sequences.get(), index - 1, uint8_t(lock_sequence & 0xF)};
}

// A waiting lock withdrawn: out of the table's queue, unless the table
// granted it already (its completion is posted: STATUS_PENDING keeps it).
NtStatus withdraw_lock(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason why) {
  if (!server.locks.cancel_wait(w.node->device, w.node->inode, conn.address, w.async_id))
    return NtStatus::Pending;
  return why == WithdrawReason::Cancel ? NtStatus::Cancelled : NtStatus::RangeNotLocked;
}

// A blocking lock that conflicts: queued in the table and answered PENDING.
NtStatus lock_or_wait(Request& req, state::Open* open, const state::ByteRange& range) {
  const state::FileNode& node = *open->node;
  state::LockTable& table = req.server.locks;
  bool can_wait = req.hdr.next_command == 0 && has_room_to_wait(req);
  state::LockWaiter waiter{req.conn.address, next_async_id(req.conn), open, range};
  NtStatus st = table.lock(node.device, node.inode, open, std::span(&range, 1), can_wait ? &waiter : nullptr);
  if (st == NtStatus::LockNotGranted && req.hdr.next_command == 0) return NtStatus::InsufficientResources;
  if (st != NtStatus::Pending) return st;
  WaitingRequest w;
  w.kind = WaitKind::ByteRangeLock;
  w.volatile_id = open->volatile_id;
  w.node = open->node;
  w.lock_owner = open;
  w.withdraw = withdraw_lock;
  st = start_waiting(req, std::move(w));
  if (st != NtStatus::Pending) table.cancel_wait(node.device, node.inode, req.conn.address, waiter.async_id);
  return st;
}

}  // namespace

NtStatus handle_lock(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t count = r.u16();
  uint32_t lock_sequence = r.u32();  // LockSequenceNumber (4 bits), LockSequenceIndex (28 bits)
  r.skip(16);  // FileId: Request::open
  if (!r.ok() || count == 0) return NtStatus::InvalidParameter;
  if (req.body.size() < kLocksOffsetInBody + size_t(count) * kLockElementSize) return NtStatus::InvalidParameter;
  std::vector<LockElement> elems(count);
  for (auto& e : elems) {
    e.offset = r.u64();
    e.length = r.u64();
    e.flags = r.u32();
    r.u32();  // Reserved
  }
  if (!r.ok()) return NtStatus::InvalidParameter;

  state::Open* open = req.open;
  if (open->is_directory) return NtStatus::InvalidParameter;
  if (!(open->granted_access & (FILE_READ_DATA | FILE_WRITE_DATA))) return NtStatus::AccessDenied;
  if (!open->node) return NtStatus::InvalidHandle;
  const uint64_t dev = open->node->device, ino = open->node->inode;
  state::LockTable& table = req.server.locks;
  LockSequenceSlot sequence = lock_sequence_slot(req, *open, lock_sequence);
  if (sequence.replayed()) {  // done before: the replay of a request whose response was lost
    w.bytes(kLockResponse);
    return NtStatus::Success;
  }
  if (sequence.array) sequence.array->valid[sequence.index] = false;

  if (elems[0].flags & SMB2_LOCKFLAG_UNLOCK) {
    // 3.3.5.14.1: elements are processed in order and processing stops at
    // the first failure; an element that is not a plain unlock fails then
    // (unlocks before it stay done, as on Windows).
    std::vector<state::LockWaiter> granted;
    NtStatus st = NtStatus::Success;
    for (const auto& e : elems) {
      if (e.flags != SMB2_LOCKFLAG_UNLOCK) st = NtStatus::InvalidParameter;
      else if (wraps(e)) st = NtStatus::InvalidLockRange;
      else st = table.unlock(dev, ino, open, e.offset, e.length, granted);
      if (st != NtStatus::Success) break;
    }
    post_lock_grants(req.server, granted);
    if (st != NtStatus::Success) return st;
  } else {
    // 3.3.5.14.2: all locks are granted or none.
    std::vector<state::ByteRange> ranges;
    ranges.reserve(elems.size());
    for (const auto& e : elems) {
      if (!valid_lock_flags(e.flags, elems.size())) return NtStatus::InvalidParameter;
      if (wraps(e)) return NtStatus::InvalidLockRange;
      ranges.push_back({e.offset, e.length, bool(e.flags & SMB2_LOCKFLAG_EXCLUSIVE_LOCK)});
    }
    bool blocking = !(elems[0].flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY);
    NtStatus st = blocking ? lock_or_wait(req, open, ranges[0]) : table.lock(dev, ino, open, ranges);
    if (st != NtStatus::Success) return st;
    break_read_caching(req.server, open->node, open, req.conn);
  }
  sequence.record();
  w.bytes(kLockResponse);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
