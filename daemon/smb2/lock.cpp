// SMB2 LOCK (MS-SMB2 2.2.26, 2.2.27, 3.3.5.14; MS-FSA 2.1.5.7, 2.1.5.8).
//
// Byte-range locks live in the server-wide state::LockTable. Every lock is
// processed as if SMB2_LOCKFLAG_FAIL_IMMEDIATELY were set: a blocking lock
// that conflicts fails at once with STATUS_LOCK_NOT_GRANTED instead of
// going async and waiting. Waiting arrives with the async machinery
// (interim STATUS_PENDING, CANCEL).
//
// Lock sequence numbers (3.3.5.14) only matter for resilient, durable and
// persistent opens, which the server does not grant yet; they are ignored.
// READ and WRITE check the locks through LockTable::check_io.
#include <vector>

#include "smb2/access.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/lease.hpp"
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

}  // namespace

NtStatus handle_lock(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t count = r.u16();
  r.u32();  // LockSequenceNumber / LockSequenceIndex
  FileId id{r.u64(), r.u64()};
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

  state::Open* open = req.find_open(id);
  if (!open) return NtStatus::FileClosed;
  if (open->is_directory) return NtStatus::InvalidParameter;
  if (!(open->granted_access & (FILE_READ_DATA | FILE_WRITE_DATA))) return NtStatus::AccessDenied;
  if (!open->node) return NtStatus::InvalidHandle;
  const uint64_t dev = open->node->device, ino = open->node->inode;
  state::LockTable& table = req.server.locks;

  if (elems[0].flags & SMB2_LOCKFLAG_UNLOCK) {
    // 3.3.5.14.1: elements are processed in order and processing stops at
    // the first failure; an element that is not a plain unlock fails then
    // (unlocks before it stay done, as on Windows).
    for (const auto& e : elems) {
      if (e.flags != SMB2_LOCKFLAG_UNLOCK) return NtStatus::InvalidParameter;
      if (wraps(e)) return NtStatus::InvalidLockRange;
      NtStatus st = table.unlock(dev, ino, open, e.offset, e.length);
      if (st != NtStatus::Success) return st;
    }
  } else {
    // 3.3.5.14.2: all locks are granted or none.
    std::vector<state::ByteRange> ranges;
    ranges.reserve(elems.size());
    for (const auto& e : elems) {
      if (!valid_lock_flags(e.flags, elems.size())) return NtStatus::InvalidParameter;
      if (wraps(e)) return NtStatus::InvalidLockRange;
      ranges.push_back({e.offset, e.length, bool(e.flags & SMB2_LOCKFLAG_EXCLUSIVE_LOCK)});
    }
    NtStatus st = table.lock(dev, ino, open, ranges);
    if (st != NtStatus::Success) return st;
    // MS-FSA 2.1.5.7: a byte-range lock ends level II / read caching.
    if (open->node->lease_count.load(std::memory_order_relaxed))
      post_breaks(req.server, req.server.files.break_readers(open->node, open, monotonic_ms(),
                                                             req.server.lease_break_timeout_ms));
  }
  w.u16(4);
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
