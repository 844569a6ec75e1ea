#include "smb2/locks/lock_grants.hpp"

#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/leases/lease.hpp"

namespace ringsmb::smb2 {

// MS-FSA 2.1.5.7: a byte-range lock ends level II / read caching.
void break_read_caching(ServerContext& server, const std::shared_ptr<state::FileNode>& node, const void* owner,
                        ConnState& cause) {
  if (node->lease_count.load(std::memory_order_relaxed))
    post_breaks(server, server.files.break_readers(node, owner, monotonic_ms(), server.lease_break_timeout_ms),
                cause);
}

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
