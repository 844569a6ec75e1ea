#include "state/durable_table.hpp"

#include <cstring>

namespace ringsmb::state {

size_t DurableTable::GuidHash::operator()(const Guid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.data(), 8);
  std::memcpy(&b, g.data() + 8, 8);
  return size_t((a * 0x9E3779B97F4A7C15ull) ^ b);
}

void DurableTable::keep(KeptOpen k) {
  uint64_t id = k.open->persistent_id;
  Shard& s = shard_for(id);
  std::lock_guard lock(s.mu);
  if (s.kept.insert_or_assign(id, std::move(k)).second) kept_.fetch_add(1, std::memory_order_relaxed);
}

Result<KeptOpen> DurableTable::take(uint64_t persistent_id, const std::function<NtStatus(const KeptOpen&)>& check) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  auto it = s.kept.find(persistent_id);
  if (it == s.kept.end()) return Unexpected(NtStatus::ObjectNameNotFound);
  if (NtStatus st = check(it->second); st != NtStatus::Success) return Unexpected(st);
  KeptOpen k = std::move(it->second);
  s.kept.erase(it);
  kept_.fetch_sub(1, std::memory_order_relaxed);
  return k;
}

std::vector<KeptOpen> DurableTable::take_lease(const Lease* l) {
  std::vector<KeptOpen> out;
  if (!kept() || !l) return out;
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto it = s.kept.begin(); it != s.kept.end();) {
      if (it->second.open->lease.get() != l) {
        ++it;
        continue;
      }
      out.push_back(std::move(it->second));
      it = s.kept.erase(it);
      kept_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  return out;
}

std::vector<KeptOpen> DurableTable::expire(int64_t now_ms, uint32_t worker) {
  std::vector<KeptOpen> out;
  if (!kept()) return out;  // the common case: one relaxed load per tick
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto it = s.kept.begin(); it != s.kept.end();) {
      if (it->second.worker != worker || it->second.deadline_ms > now_ms) {
        ++it;
        continue;
      }
      out.push_back(std::move(it->second));
      it = s.kept.erase(it);
      kept_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  return out;
}

std::vector<KeptOpen> DurableTable::take_all() {
  std::vector<KeptOpen> out;
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto& [id, k] : s.kept) out.push_back(std::move(k));
    kept_.fetch_sub(s.kept.size(), std::memory_order_relaxed);
    s.kept.clear();
  }
  return out;
}

void DurableTable::index_create_guid(const Guid& client, const Guid& create, uint64_t persistent_id) {
  Shard& s = shard_for(create);
  std::lock_guard lock(s.mu);
  s.by_create_guid[create] = {client, persistent_id};
}

void DurableTable::unindex_create_guid(const Guid& create, uint64_t persistent_id) {
  Shard& s = shard_for(create);
  std::lock_guard lock(s.mu);
  auto it = s.by_create_guid.find(create);
  if (it != s.by_create_guid.end() && it->second.second == persistent_id) s.by_create_guid.erase(it);
}

std::optional<uint64_t> DurableTable::find_create_guid(const Guid& client, const Guid& create) {
  Shard& s = shard_for(create);
  std::lock_guard lock(s.mu);
  auto it = s.by_create_guid.find(create);
  if (it == s.by_create_guid.end() || it->second.first != client) return std::nullopt;
  return it->second.second;
}

}  // namespace ringsmb::state
