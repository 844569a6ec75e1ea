// The end of a connection, above the engine: its waiting requests are
// withdrawn, its durable opens kept for a reconnect, the rest of its opens
// closed and its sessions logged off.
#pragma once

#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// Releases everything a connection holds (opens, sessions) when it ends.
void teardown_connection(ConnState& conn, ServerContext& server);

}  // namespace ringsmb::smb2
