// Oplock and lease plumbing of the SMB2 layer: break notifications
// (MS-SMB2 2.2.23, 3.3.4.6, 3.3.4.7) posted to the worker that owns the
// holder's connection, and wake-ups of CREATEs waiting for acknowledgments.
#pragma once

#include <memory>
#include <vector>

#include "smb2/engine/chain.hpp"
#include "smb2/engine/clock.hpp"
#include "smb2/engine/create_context_chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"
#include "state/lease_table.hpp"

namespace ringsmb::smb2 {

// Sends each notice on its holder's connection (from that connection's thread).
void post_breaks(ServerContext& server, const std::vector<state::BreakNotice>& breaks);
// The same from a request of CURRENT: a break for CURRENT itself goes out
// right after the responses of the frame being processed, before any later
// request's response (smb2.lease.rename_wait reads the break while its
// next CREATE is answered). The others are posted, and CURRENT sends no
// reply until their notifications are in their connections' sockets
// (ConnState::breaks_unsent): the client reads the break before the reply
// (smb2.lease.unlink), whichever workers serve the two connections.
void post_breaks(ServerContext& server, const std::vector<state::BreakNotice>& breaks, ConnState& current);

// MS-FSA 2.1.5.3 and 2.1.5.7: a write or a byte-range lock through OWNER
// ends the read caching (level II oplocks, R leases) of NODE's other opens;
// the breaks go as post_breaks from a request of CAUSE sends them. One
// atomic load when none is held; nothing for a null NODE.
void break_read_caching(ServerContext& server, const std::shared_ptr<state::FileNode>& node, const void* owner,
                        ConnState& cause);

// Sends the notification for `b` (encrypted where the session requires
// it) through the send path into `out`. Runs on the connection's worker thread.
void write_break_notification(ConnState& conn, const state::BreakNotice& b, Bytes& out);
// The breaks held while CONN's overwriting CREATEs were unanswered
// (ConnState::held_breaks) go out after what is ready now.
void release_held_breaks(ConnState& conn);

// Breaks past their deadline count as acknowledged; their waiters run again.
void expire_pending(ConnState& conn, ServerContext& server, int64_t now_ms);
// Whether CONN has a request whose wait expire_pending may end (a CREATE
// waiting for a lease break's acknowledgment, which has a deadline).
bool has_expiring_waits(const ConnState& conn);

}  // namespace ringsmb::smb2
