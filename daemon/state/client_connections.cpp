#include "state/client_connections.hpp"

#include <algorithm>
#include <cstring>

namespace ringsmb::state {

size_t ClientConnections::GuidHash::operator()(const Guid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.data(), 8);
  std::memcpy(&b, g.data() + 8, 8);
  return size_t(a * 0x9E3779B97F4A7C15ull ^ b);
}

void ClientConnections::add(const Guid& client, const ConnAddress& conn) {
  std::lock_guard lock(mu_);
  by_client_[client].push_back(conn);
}

void ClientConnections::remove(const Guid& client, const ConnAddress& conn) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  std::erase_if(it->second,
                [&](const ConnAddress& c) { return c.worker == conn.worker && c.conn_id == conn.conn_id; });
  if (it->second.empty()) by_client_.erase(it);
}

std::optional<ConnAddress> ClientConnections::oldest(const Guid& client) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

}  // namespace ringsmb::state
