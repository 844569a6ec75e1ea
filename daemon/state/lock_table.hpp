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
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/ntstatus.hpp"

namespace ringsmb::state {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool exclusive = false;
};

class LockTable {
 public:
  // Takes all `ranges` for `owner` or none: LockNotGranted on a conflict.
  // Ranges must not wrap past 2^64 (the caller validates).
  NtStatus lock(uint64_t dev, uint64_t ino, const void* owner, std::span<const ByteRange> ranges);
  // Removes one lock of `owner` with exactly this offset and length (an
  // exclusive one before a shared one); RangeNotLocked when there is none.
  NtStatus unlock(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length);
  // MS-FSA 2.1.5.2 / 2.1.5.3: may `owner` read (or write) `length` bytes at
  // `offset`? A read conflicts with another open's exclusive lock; a write
  // also with any shared lock, the writer's own included. Zero-length I/O
  // and zero-length locks never conflict. FileLockConflict when it would.
  NtStatus check_io(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length, bool write);
  // Drops every lock `owner` holds on the file (when the open closes).
  void release(const void* owner, uint64_t dev, uint64_t ino);
  // Number of locks held on the file (tests, statistics).
  size_t count(uint64_t dev, uint64_t ino);

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
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, std::vector<Lock>, KeyHash> files;
  };
  Shard& shard_for(uint64_t dev, uint64_t ino) { return shards_[KeyHash()({dev, ino}) % kShards]; }
  static bool conflicts(const Lock& held, const void* owner, const ByteRange& want);
  std::array<Shard, kShards> shards_;
};

}  // namespace ringsmb::state
