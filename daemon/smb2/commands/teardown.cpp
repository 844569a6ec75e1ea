#include "smb2/commands/teardown.hpp"

#include <algorithm>
#include <utility>

#include "common/log.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {
namespace {

// Session SID lost its last channel: it ends as it would with its only
// connection (its durable opens kept, the rest closed).
void end_lost_session(ConnState& conn, ServerContext& server, uint64_t sid) {
  keep_or_close_session_opens(conn, server, sid);
  auto it = conn.tables->sessions.find(sid);
  if (it->second->state == state::Session::State::Valid && server.control) server.control->logout(it->second->user);
  server.sessions.remove(sid);
  conn.tables->sessions.erase(it);
}

// The session's first channel went: the next one holds it now, for a
// reconnect or binding that looks it up (SessionHome) and the oplock
// breaks that go to it (smb2/leases/lease_break.cpp).
void rehome_session(ServerContext& server, const SessionTables& t, const state::Session& s) {
  auto next = std::ranges::find_if(
      t.members, [&](const ConnState* m) { return m->address.conn_id == s.channels.front().conn_id; });
  std::optional<state::SessionHome> home = server.sessions.find(s.session_id);
  if (next == t.members.end() || !home) return;
  home->conn = (*next)->address;
  server.sessions.add(s.session_id, std::move(*home));
  LOG_INFO("%s: session 0x%llx of '%s' lost its first channel; %zu left", (*next)->client_address.c_str(),
           (unsigned long long)s.session_id, s.user.c_str(), s.channels.size());
}

// CONN ends while other connections share its tables (MS-SMB2 3.3.7.1):
// it leaves the channels of every session; a session with none left ends,
// the others stay reachable, with their opens, through the rest.
void leave_channels(ConnState& conn, ServerContext& server) {
  SessionTables& t = *conn.tables;
  std::erase(t.members, &conn);
  uint64_t me = conn.address.conn_id;
  std::vector<uint64_t> ended;
  for (auto& [sid, s] : t.sessions) {
    if (!s->channel(me)) continue;
    bool was_first = s->channels.front().conn_id == me;
    if (const Bytes& key = s->channel(me)->signing_key; key != s->keys.signing_key) crypto::forget_key(key);
    std::erase_if(s->channels, [me](const state::Channel& c) { return c.conn_id == me; });
    if (s->channels.empty())
      ended.push_back(sid);
    else if (was_first)
      rehome_session(server, t, *s);
  }
  for (uint64_t sid : ended) end_lost_session(conn, server, sid);
  conn.tables = std::make_shared<SessionTables>();
}

// Another channel of session SID than CONN, among the connections that
// share CONN's tables (all on this worker); null when CONN is its last.
ConnState* other_channel(ConnState& conn, uint64_t sid) {
  auto it = conn.tables->sessions.find(sid);
  if (it == conn.tables->sessions.end()) return nullptr;
  for (const state::Channel& ch : it->second->channels) {
    if (ch.conn_id == conn.address.conn_id) continue;
    for (ConnState* m : conn.tables->members)
      if (m != &conn && m->address.conn_id == ch.conn_id) return m;
  }
  return nullptr;
}

// A waiting CREATE that may outlive its channel: a durable v2 one (a
// replay of it can find its open, MS-SMB2 3.3.5.9.10), alone in its chain
// (a compound's later elements would take credits of another channel).
bool outlives_channel(const WaitingRequest& w) {
  return w.kind == WaitKind::RunAgain && w.has_create_guid && w.node && w.pdu.size() >= wire::kHeaderSize &&
         load_le32(w.pdu.data() + wire::hdr::NextCommand) == 0;
}

// CONN ends while other channels serve the sessions of its durable v2
// CREATEs that wait for breaks: each goes on waiting on another channel
// of its session and makes its open when the breaks end, for a replay of
// the CREATE on any channel to get back, as Samba keeps such an open
// (smb2.replay.dhv2-pending2*); until then a replay gets
// FILE_NOT_AVAILABLE. Its response is owed to CONN alone and is dropped.
void hand_over_waiting_creates(ConnState& conn, ServerContext& server) {
  std::vector<uint64_t> ids;
  for (const auto& [id, w] : conn.async.waiting)
    if (outlives_channel(w)) ids.push_back(id);
  for (uint64_t id : ids) {
    const WaitingRequest& w = conn.async.waiting.at(id);
    uint64_t sid = w.session_id;
    ConnState* heir = other_channel(conn, sid);
    if (!heir) continue;
    std::shared_ptr<state::FileNode> node = w.node;
    uint64_t new_id = hand_over_waiting(conn, *heir, id);
    // Woken already: the wake-up on its way goes to CONN, which is ending.
    if (!server.files.move_waiter(node, {conn.address, id}, {heir->address, new_id}))
      post_wakeups(server, {state::Waiter{heir->address, new_id}});
    LOG_DEBUG("%s: a waiting CREATE of session 0x%llx goes on waiting on another channel",
              conn.client_address.c_str(), (unsigned long long)sid);
  }
}

}  // namespace

void teardown_connection(ConnState& conn, ServerContext& server) {
  if (std::exchange(conn.client_registered, false)) server.clients.remove(conn.client_guid, conn.address);
  if (conn.tables->members.size() > 1) hand_over_waiting_creates(conn, server);
  withdraw_all(conn, server);
  conn.bindings.clear();
  if (conn.tables->members.size() > 1) return leave_channels(conn, server);
  keep_durable_opens(conn, server, 0);  // before the rest is closed (MS-SMB2 3.3.7.1)
  while (!conn.tables->opens.empty()) close_open(conn, server, conn.tables->opens.begin()->first);  // pipes too
  for (auto& [id, s] : conn.tables->sessions) {
    if (s->state == state::Session::State::Valid && server.control) server.control->logout(s->user);
    server.sessions.remove(id);
  }
  conn.tables->sessions.clear();
}

}  // namespace ringsmb::smb2
