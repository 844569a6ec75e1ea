#include "state/lock_table.hpp"

#include <algorithm>

namespace ringsmb::state {
namespace {

// Inclusive last byte; only called for length > 0 ranges that do not wrap.
uint64_t last_byte(uint64_t offset, uint64_t length) { return offset + (length - 1); }

// A zero-length lock at X sits between bytes X-1 and X: it overlaps a range
// only when the range holds both (start < X <= last), and never another
// zero-length lock. That is what Windows does (a 0-byte lock at 10 blocks
// {9,2} but neither {10,2} nor {9,1}).
bool inside(uint64_t x, uint64_t off, uint64_t len) { return off < x && x <= last_byte(off, len); }

bool overlaps(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len) {
  if (a_len == 0 && b_len == 0) return false;
  if (a_len == 0) return inside(a_off, b_off, b_len);
  if (b_len == 0) return inside(b_off, a_off, a_len);
  return a_off <= last_byte(b_off, b_len) && b_off <= last_byte(a_off, a_len);
}

}  // namespace

bool LockTable::conflicts(const Lock& held, const void* owner, const ByteRange& want) {
  if (!overlaps(held.offset, held.length, want.offset, want.length)) return false;
  if (want.exclusive) return true;
  return held.exclusive && held.owner != owner;
}

NtStatus LockTable::lock(uint64_t dev, uint64_t ino, const void* owner, std::span<const ByteRange> ranges) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto& locks = s.files[{dev, ino}];
  size_t before = locks.size();
  for (const ByteRange& r : ranges) {
    bool clash = std::any_of(locks.begin(), locks.end(), [&](const Lock& l) { return conflicts(l, owner, r); });
    if (clash) {
      locks.resize(before);  // all or nothing
      if (locks.empty()) s.files.erase({dev, ino});
      return NtStatus::LockNotGranted;
    }
    locks.push_back({owner, r.offset, r.length, r.exclusive});
  }
  if (locks.empty()) s.files.erase({dev, ino});
  return NtStatus::Success;
}

NtStatus LockTable::unlock(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return NtStatus::RangeNotLocked;
  auto& locks = it->second;
  // Of stacked locks on the same range, the exclusive one goes first.
  auto matches = [&](const Lock& x) { return x.owner == owner && x.offset == offset && x.length == length; };
  auto l = std::find_if(locks.begin(), locks.end(), [&](const Lock& x) { return matches(x) && x.exclusive; });
  if (l == locks.end()) l = std::find_if(locks.begin(), locks.end(), matches);
  if (l == locks.end()) return NtStatus::RangeNotLocked;
  locks.erase(l);
  if (locks.empty()) s.files.erase(it);
  return NtStatus::Success;
}

NtStatus LockTable::check_io(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length,
                            bool write) {
  if (length == 0) return NtStatus::Success;
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return NtStatus::Success;
  uint64_t last = offset + std::min(length - 1, UINT64_MAX - offset);
  for (const Lock& l : it->second) {
    if (l.length == 0 || l.offset > last || last_byte(l.offset, l.length) < offset) continue;
    if (l.exclusive ? l.owner != owner : write) return NtStatus::FileLockConflict;
  }
  return NtStatus::Success;
}

void LockTable::release(const void* owner, uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return;
  std::erase_if(it->second, [&](const Lock& l) { return l.owner == owner; });
  if (it->second.empty()) s.files.erase(it);
}

size_t LockTable::count(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  return it == s.files.end() ? 0 : it->second.size();
}

}  // namespace ringsmb::state
