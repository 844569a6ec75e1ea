#include "state/lock_table.hpp"

#include <algorithm>

#include "common/assert.hpp"

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

// What the table keeps for one file (KEY in FILES): the locks held never
// conflict with each other (overlapping locks are all shared, or an
// owner's shared lock stacked on its own exclusive one), and a file with
// neither locks nor waiters has no entry. O(n^2): assertion builds only.
template <class Files, class Key>
void check_file(const Files& files, const Key& key) {
  if constexpr (!RINGSMB_ASSERTIONS_ON) return;
  auto it = files.find(key);
  if (it == files.end()) return;
  RINGSMB_ASSERT(!it->second.empty());
  const auto& locks = it->second.locks;
  for (size_t i = 0; i < locks.size(); ++i)
    for (size_t j = i + 1; j < locks.size(); ++j) {
      const auto& a = locks[i];
      const auto& b = locks[j];
      if (!overlaps(a.offset, a.length, b.offset, b.length)) continue;
      RINGSMB_ASSERT(!(a.exclusive && b.exclusive));
      RINGSMB_ASSERT(!(a.exclusive || b.exclusive) || a.owner == b.owner);
    }
}

}  // namespace

bool LockTable::conflicts(const Lock& held, const void* owner, const ByteRange& want) {
  if (!overlaps(held.offset, held.length, want.offset, want.length)) return false;
  if (want.exclusive) return true;
  return held.exclusive && held.owner != owner;
}

bool LockTable::clashes(const std::vector<Lock>& locks, const void* owner, const ByteRange& want) {
  return std::any_of(locks.begin(), locks.end(), [&](const Lock& l) { return conflicts(l, owner, want); });
}

// After locks went: each waiter, oldest first, that no longer conflicts
// (with what is held, the locks just granted included) gets its lock.
void LockTable::grant_waiters(FileLocks& f, std::vector<LockWaiter>& granted) {
  for (auto it = f.waiters.begin(); it != f.waiters.end();) {
    if (clashes(f.locks, it->owner, it->range)) {
      ++it;
      continue;
    }
    f.locks.push_back({it->owner, it->range.offset, it->range.length, it->range.exclusive});
    granted.push_back(*it);
    it = f.waiters.erase(it);
  }
}

NtStatus LockTable::lock(uint64_t dev, uint64_t ino, const void* owner, std::span<const ByteRange> ranges,
                         const LockWaiter* wait) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  FileLocks& f = s.files[{dev, ino}];
  size_t before = f.locks.size();
  for (const ByteRange& r : ranges) {
    if (clashes(f.locks, owner, r)) {
      f.locks.resize(before);  // all or nothing
      if (wait) {
        f.waiters.push_back(*wait);
        return NtStatus::Pending;
      }
      if (f.empty()) s.files.erase({dev, ino});
      return NtStatus::LockNotGranted;
    }
    f.locks.push_back({owner, r.offset, r.length, r.exclusive});
  }
  if (f.empty()) s.files.erase({dev, ino});
  check_file(s.files, Key{dev, ino});
  return NtStatus::Success;
}

NtStatus LockTable::unlock(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length,
                           std::vector<LockWaiter>& granted) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return NtStatus::RangeNotLocked;
  auto& locks = it->second.locks;
  // Of stacked locks on the same range, the exclusive one goes first.
  auto matches = [&](const Lock& x) { return x.owner == owner && x.offset == offset && x.length == length; };
  auto l = std::find_if(locks.begin(), locks.end(), [&](const Lock& x) { return matches(x) && x.exclusive; });
  if (l == locks.end()) l = std::find_if(locks.begin(), locks.end(), matches);
  if (l == locks.end()) return NtStatus::RangeNotLocked;
  locks.erase(l);
  grant_waiters(it->second, granted);
  if (it->second.empty()) s.files.erase(it);
  check_file(s.files, Key{dev, ino});
  return NtStatus::Success;
}

bool LockTable::cancel_wait(uint64_t dev, uint64_t ino, const ConnAddress& conn, uint64_t async_id) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return false;
  auto& waiters = it->second.waiters;
  auto w = std::find_if(waiters.begin(), waiters.end(), [&](const LockWaiter& x) {
    return x.async_id == async_id && x.conn.worker == conn.worker && x.conn.conn_id == conn.conn_id;
  });
  if (w == waiters.end()) return false;
  waiters.erase(w);
  if (it->second.empty()) s.files.erase(it);
  return true;
}

NtStatus LockTable::check_io(uint64_t dev, uint64_t ino, const void* owner, uint64_t offset, uint64_t length,
                            bool write) {
  if (length == 0) return NtStatus::Success;
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return NtStatus::Success;
  uint64_t last = offset + std::min(length - 1, UINT64_MAX - offset);
  for (const Lock& l : it->second.locks) {
    if (l.length == 0 || l.offset > last || last_byte(l.offset, l.length) < offset) continue;
    if (l.exclusive ? l.owner != owner : write) return NtStatus::FileLockConflict;
  }
  return NtStatus::Success;
}

void LockTable::release(const void* owner, uint64_t dev, uint64_t ino, std::vector<LockWaiter>& granted) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return;
  if (std::erase_if(it->second.locks, [&](const Lock& l) { return l.owner == owner; }))
    grant_waiters(it->second, granted);
  if (it->second.empty()) s.files.erase(it);
  check_file(s.files, Key{dev, ino});
}

std::vector<ByteRange> LockTable::locks_of(uint64_t dev, uint64_t ino, const void* owner) {
  std::vector<ByteRange> out;
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  if (it == s.files.end()) return out;
  for (const Lock& l : it->second.locks)
    if (l.owner == owner) out.push_back({l.offset, l.length, l.exclusive});
  return out;
}

size_t LockTable::count(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  return it == s.files.end() ? 0 : it->second.locks.size();
}

size_t LockTable::waiting(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard guard(s.mu);
  auto it = s.files.find({dev, ino});
  return it == s.files.end() ? 0 : it->second.waiters.size();
}

}  // namespace ringsmb::state
