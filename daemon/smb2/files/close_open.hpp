// Closing an open, for CLOSE and everything else that ends one (TREE_DISCONNECT,
// LOGOFF, the end of a connection, a durable open that times out).
#pragma once

#include <memory>

#include "config/config.hpp"
#include "ipc/control_plane.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// Closes an open (share-mode release, delete-on-close) and forgets it.
void close_open(ConnState& conn, ServerContext& server, uint64_t volatile_id);
// What closing does once the open is out of its connection: locks, share
// modes and lease released, delete-on-close performed (under ROOT_FD, the
// share root, as IDENTITY; -1: not possible), the directory's leases
// broken except for CLIENT's (its ClientGuid). Also for a kept durable open
// that times out (smb2/durable/durable.hpp). RECYCLE: the share's recycle
// bin, where a deleted file goes instead (smb2/files/recycle.hpp); null: none.
void release_open(ServerContext& server, std::unique_ptr<state::Open> open, int root_fd,
                  const ipc::UnixUser& identity, const state::Guid& client, const config::RecycleConfig* recycle);

}  // namespace ringsmb::smb2
