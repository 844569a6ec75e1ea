// Byte-range locks (MS-FSA 2.1.5.7), for every open file in the server,
// keyed by (device, inode) so locks taken through different connections
// see each other. Sharded like the FileTable: one request locks one shard.
//
// Conflict rules (what Windows does):
//  - an exclusive lock conflicts with every overlapping lock, the
//    requester's own included;
//  - a shared lock conflicts with overlapping exclusive locks of other opens
//    (an open may stack a shared lock on its own exclusive range);
//  - a zero-length lock at X overlaps a range that contains both X-1 and X,
//    and never another zero-length lock.
//
// Blocking locks (MS-SMB2 3.3.5.14, MS-FSA 2.1.5.7): a lock that conflicts
// may wait in the file's queue. When locks go (unlock, an open's release)
// the table grants the waiters that no longer conflict, in arrival order,
// under the same shard lock, and hands them back to the caller, who tells
// each waiter's connection (on whichever worker it lives). The table is
// the arbiter: a waiter is either still queued (cancel_wait removes it) or
// granted, never both.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/ntstatus.hpp"
#include "state/lease_table.hpp"

namespace ringsmb::state {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool exclusive = false;
};

// A blocking lock request waiting for its range: who asked (the
// connection and the AsyncId of its interim response) and what.
struct LockWaiter {
  ConnAddress conn;
  uint64_t async_id = 0;
  const void* owner = nullptr;
  ByteRange range;
};

class LockTable {
 public:
  // Takes all `ranges` for `owner` or none: LockNotGranted on a conflict.
  // Ranges must not wrap past 2^64 (the caller validates). With `wait` (one
  // range, the request's own), a conflict queues the request instead:
  // Pending, and the lock is granted later by unlock() or release().
  NtStatus lock(uint64_t dev, uint64_t ino, const void* owner, std::span<const ByteRange> ranges,
                const LockWaiter* wait = nullptr);
  // Removes one lock of `owner` with exactly this offset and length (an
  // exclusive one before a shared one); RangeNotLocked when there is none.
  // Waiters it lets through are granted and appended to `granted`.
  NtStatus unlock(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length,
                  std::vector<LockWaiter>& granted);
  // Takes a waiter out of the queue: false when it is not there (granted
  // already, or never queued).
  bool cancel_wait(uint64_t dev, uint64_t ino, const ConnAddress& conn, uint64_t async_id);
  // MS-FSA 2.1.5.2 / 2.1.5.3: may `owner` read (or write) `length` bytes at
  // `offset`? A read conflicts with another open's exclusive lock; a write
  // also with any shared lock, the writer's own included. Zero-length I/O
  // and zero-length locks never conflict. FileLockConflict when it would.
  NtStatus check_io(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length, bool write);
  // Drops every lock `owner` holds on the file (when the open closes);
  // waiters it lets through are granted and appended to `granted`.
  void release(const void* owner, uint64_t dev, uint64_t ino, std::vector<LockWaiter>& granted);
  // The locks `owner` holds on the file, oldest first (ringsmbctl status).
  std::vector<ByteRange> locks_of(uint64_t dev, uint64_t ino, const void* owner);
  // Number of locks held on the file (tests, statistics).
  size_t count(uint64_t dev, uint64_t ino);
  // Number of requests waiting on the file (tests).
  size_t waiting(uint64_t dev, uint64_t ino);

 private:
  struct Lock {
    const void* owner;
    uint64_t offset;
    uint64_t length;
    bool exclusive;
  };
  static constexpr size_t kShards = 64;
  using Key = std::pair<uint64_t, uint64_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second); }
  };
  struct FileLocks {
    std::vector<Lock> locks;
    std::vector<LockWaiter> waiters;  // arrival order
    bool empty() const { return locks.empty() && waiters.empty(); }
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, FileLocks, KeyHash> files;
  };
  Shard& shard_for(uint64_t dev, uint64_t ino) { return shards_[KeyHash()({dev, ino}) % kShards]; }
  static bool conflicts(const Lock& held, const void* owner, const ByteRange& want);
  static bool clashes(const std::vector<Lock>& locks, const void* owner, const ByteRange& want);
  static void grant_waiters(FileLocks& f, std::vector<LockWaiter>& granted);
  std::array<Shard, kShards> shards_;
};

}  // namespace ringsmb::state
