#include "state/durable_table.hpp"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>

namespace ringsmb::state {

size_t DurableTable::GuidHash::operator()(const Guid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.data(), 8);
  std::memcpy(&b, g.data() + 8, 8);
  return size_t((a * 0x9E3779B97F4A7C15ull) ^ b);
}

std::shared_ptr<const KeptRoot> DurableTable::share_root(int tree_root, std::atomic<uint32_t>* open_files) {
  struct statx stx {};
  if (statx(tree_root, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx) != 0) return nullptr;
  // The mount too: a bind mount of the same directory may be read-only.
  RootId id{makedev(stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
            (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0};
  std::lock_guard lock(roots_mu_);
  if (auto it = roots_.find(id); it != roots_.end())
    if (auto root = it->second.lock()) return root;
  std::erase_if(roots_, [](const auto& r) { return r.second.expired(); });  // roots no kept open needs any more
  auto root = std::make_shared<KeptRoot>();
  root->fd.reset(fcntl(tree_root, F_DUPFD_CLOEXEC, 0));
  if (!root->fd) return nullptr;
  root->charge = OpenCharge(open_files, nullptr);
  roots_[id] = root;
  return root;
}

std::vector<Waiter> DurableTable::end_live_locked(Shard& s, uint64_t persistent_id) {
  std::vector<Waiter> wake;
  auto it = s.live.find(persistent_id);
  if (it == s.live.end()) return wake;
  for (auto& [w, deadline] : it->second.waits) wake.push_back(w);
  waits_.fetch_sub(it->second.waits.size(), std::memory_order_relaxed);
  s.live.erase(it);
  return wake;
}

std::vector<Waiter> DurableTable::keep(KeptOpen k) {
  uint64_t id = k.open->persistent_id;
  Shard& s = shard_for(id);
  std::lock_guard lock(s.mu);
  if (s.kept.insert_or_assign(id, std::move(k)).second) kept_.fetch_add(1, std::memory_order_relaxed);
  return end_live_locked(s, id);
}

void DurableTable::set_live(uint64_t persistent_id, const ConnAddress& conn) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  s.live[persistent_id].conn = conn;
}

std::vector<Waiter> DurableTable::clear_live(uint64_t persistent_id) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  return end_live_locked(s, persistent_id);
}

bool DurableTable::wait_for_live(uint64_t persistent_id, const ConnAddress& me, const Waiter& w, int64_t deadline_ms) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  auto it = s.live.find(persistent_id);
  if (it == s.live.end() || (it->second.conn.worker == me.worker && it->second.conn.conn_id == me.conn_id))
    return false;
  it->second.waits.emplace_back(w, deadline_ms);
  waits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void DurableTable::cancel_wait(uint64_t persistent_id, const Waiter& w) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  auto it = s.live.find(persistent_id);
  if (it == s.live.end()) return;
  waits_.fetch_sub(std::erase_if(it->second.waits,
                                 [&](const auto& p) {
                                   return p.first.async_id == w.async_id && p.first.conn.worker == w.conn.worker &&
                                          p.first.conn.conn_id == w.conn.conn_id;
                                 }),
                   std::memory_order_relaxed);
}

std::vector<Waiter> DurableTable::expire_waits(int64_t now_ms, uint32_t worker) {
  std::vector<Waiter> out;
  if (!waits_.load(std::memory_order_relaxed)) return out;
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto& [id, live] : s.live) {
      size_t gone = std::erase_if(live.waits, [&](const auto& p) {
        if (p.first.conn.worker != worker || p.second > now_ms) return false;
        out.push_back(p.first);
        return true;
      });
      waits_.fetch_sub(gone, std::memory_order_relaxed);
    }
  }
  return out;
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

template <typename Pred>
std::vector<KeptOpen> DurableTable::take_if(Pred selected) {
  std::vector<KeptOpen> out;
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto it = s.kept.begin(); it != s.kept.end();) {
      if (!selected(it->second)) {
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

std::vector<KeptOpen> DurableTable::take_lease(const Lease* l) {
  if (!kept() || !l) return {};
  return take_if([l](const KeptOpen& k) { return k.open->lease.get() == l; });
}

std::vector<KeptOpen> DurableTable::expire(int64_t now_ms, uint32_t worker) {
  if (!kept()) return {};  // the common case: one relaxed load per tick
  return take_if([=](const KeptOpen& k) { return k.worker == worker && k.deadline_ms <= now_ms; });
}

void DurableTable::for_each_kept(const std::function<void(const KeptOpen&)>& visit) {
  if (!kept()) return;
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (const auto& [id, k] : s.kept) visit(k);
  }
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

void DurableTable::index_app_instance(const Guid& app, AppInstanceOpen open) {
  Shard& s = shard_for(app);
  std::lock_guard lock(s.mu);
  s.by_app_instance.emplace(app, std::move(open));
}

void DurableTable::unindex_app_instance(const Guid& app, uint64_t persistent_id) {
  Shard& s = shard_for(app);
  std::lock_guard lock(s.mu);
  auto [first, last] = s.by_app_instance.equal_range(app);
  for (auto it = first; it != last; ++it) {
    if (it->second.persistent_id != persistent_id) continue;
    s.by_app_instance.erase(it);
    return;
  }
}

std::vector<AppInstanceOpen> DurableTable::find_app_instance(const Guid& app, const Guid& client,
                                                             std::string_view user, std::string_view share,
                                                             std::string_view path) {
  std::vector<AppInstanceOpen> out;
  Shard& s = shard_for(app);
  std::lock_guard lock(s.mu);
  auto [first, last] = s.by_app_instance.equal_range(app);
  for (auto it = first; it != last; ++it) {
    const AppInstanceOpen& o = it->second;
    if (o.client_guid == client || o.user != user || o.share != share || o.path.size() != path.size()) continue;
    if (strncasecmp(o.path.data(), path.data(), path.size()) == 0) out.push_back(o);
  }
  return out;
}

std::optional<ConnAddress> DurableTable::live_at(uint64_t persistent_id) {
  Shard& s = shard_for(persistent_id);
  std::lock_guard lock(s.mu);
  auto it = s.live.find(persistent_id);
  if (it == s.live.end()) return std::nullopt;
  return it->second.conn;
}

std::vector<Waiter> DurableTable::forget(const Open& open) {
  if (open.create_guid_indexed) unindex_create_guid(open.create_guid, open.persistent_id);
  if (open.app_instance_indexed) unindex_app_instance(open.app_instance_id, open.persistent_id);
  if (open.outlives_connection() || open.app_instance_indexed) return clear_live(open.persistent_id);
  return {};
}

}  // namespace ringsmb::state
