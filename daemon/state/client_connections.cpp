#include "state/client_connections.hpp"

#include <algorithm>
#include <cstring>

namespace ringsmb::state {
namespace {

bool same_conn(const ConnAddress& a, const ConnAddress& b) { return a.worker == b.worker && a.conn_id == b.conn_id; }

}  // namespace

size_t ClientConnections::GuidHash::operator()(const Guid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.data(), 8);
  std::memcpy(&b, g.data() + 8, 8);
  return size_t(a * 0x9E3779B97F4A7C15ull ^ b);
}

void ClientConnections::add(const Guid& client, const ConnAddress& conn, uint64_t session_id,
                            const std::string& user) {
  std::lock_guard lock(mu_);
  by_client_[client].push_back({conn, session_id, user});
}

void ClientConnections::rename(const Guid& client, const ConnAddress& conn, uint64_t session_id,
                               const std::string& user) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  for (Entry& e : it->second)
    if (e.session_id == session_id && same_conn(e.conn, conn)) e.user = user;
}

void ClientConnections::remove_session(const Guid& client, const ConnAddress& conn, uint64_t session_id) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  std::erase_if(it->second, [&](const Entry& e) { return e.session_id == session_id && same_conn(e.conn, conn); });
  if (it->second.empty()) by_client_.erase(it);
}

void ClientConnections::remove(const Guid& client, const ConnAddress& conn) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  std::erase_if(it->second, [&](const Entry& e) { return same_conn(e.conn, conn); });
  if (it->second.empty()) by_client_.erase(it);
}

std::optional<ConnAddress> ClientConnections::oldest(const Guid& client, std::string_view user) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return std::nullopt;
  for (const Entry& e : it->second)
    if (e.user == user) return e.conn;
  return std::nullopt;
}

std::optional<ConnAddress> ClientConnections::oldest(const Guid& client) {
  std::lock_guard lock(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end() || it->second.empty()) return std::nullopt;
  return it->second.front().conn;
}

}  // namespace ringsmb::state
