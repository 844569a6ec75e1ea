#include "smb2/notify/own_changes.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kMaxHeld = 4096;  // a flood of SET_INFOs does not grow the table without bound

}  // namespace

std::string OwnChanges::key(uint64_t dev, uint64_t ino, std::string_view name) {
  std::string k(16, '\0');
  for (int i = 0; i < 8; ++i) {
    k[size_t(i)] = char(dev >> (8 * i));
    k[size_t(8 + i)] = char(ino >> (8 * i));
  }
  k.append(name);
  return k;
}

void OwnChanges::add(uint64_t dev, uint64_t ino, std::string_view name, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (until_.size() >= kMaxHeld) std::erase_if(until_, [now_ms](const auto& e) { return e.second < now_ms; });
  if (until_.size() >= kMaxHeld) until_.clear();  // all recent: forget them (the watchers then see all filters)
  until_[key(dev, ino, name)] = now_ms + hold_ms_;
  count_.store(until_.size(), std::memory_order_relaxed);
}

bool OwnChanges::recent(uint64_t dev, uint64_t ino, std::string_view name, int64_t now_ms) {
  if (empty()) return false;
  std::lock_guard lock(mu_);
  auto it = until_.find(key(dev, ino, name));
  if (it == until_.end()) return false;
  if (it->second >= now_ms) return true;
  until_.erase(it);
  count_.store(until_.size(), std::memory_order_relaxed);
  return false;
}

OwnChanges& OwnChanges::process() {
  static OwnChanges changes(2000);
  return changes;
}

// Longer: an entry's event is judged only once it has settled (up to a
// worker tick, 1 s, later; directory_lease.cpp).
OwnChanges& OwnChanges::entries() {
  static OwnChanges changes(5000);
  return changes;
}

}  // namespace ringsmb::smb2
