#include "smb2/commands/teardown.hpp"

#include <utility>

#include "smb2/commands/handlers.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

void teardown_connection(ConnState& conn, ServerContext& server) {
  if (std::exchange(conn.client_registered, false)) server.clients.remove(conn.client_guid, conn.address);
  withdraw_all(conn, server);
  keep_durable_opens(conn, server, 0);  // before the rest is closed (MS-SMB2 3.3.7.1)
  while (!conn.opens.empty()) close_open(conn, server, conn.opens.begin()->first);  // pipes too
  for (auto& [id, s] : conn.sessions) {
    if (s->state == state::Session::State::Valid && server.control) server.control->logout(s->user);
    server.sessions.remove(id);
  }
  conn.sessions.clear();
}

}  // namespace ringsmb::smb2
