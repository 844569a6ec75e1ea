#include "smb2/locks/lock_grants.hpp"

#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/leases/lease.hpp"

namespace ringsmb::smb2 {

void post_lock_grants(ServerContext& server, const std::vector<state::LockWaiter>& granted) {
  for (const state::LockWaiter& g : granted) {
    uint64_t id = g.async_id;
    post_to_conn(server, g.conn, [&server, id](ConnState& conn, Bytes&) {
      WaitingRequest* w = find_waiting(conn, id);
      if (!w) return;  // the connection let go of it meanwhile
      std::shared_ptr<state::FileNode> node = w->node;
      const void* owner = w->lock_owner;
      complete(conn, id, NtStatus::Success, kLockResponse);
      break_read_caching(server, node, owner, conn);
    });
  }
}

}  // namespace ringsmb::smb2
