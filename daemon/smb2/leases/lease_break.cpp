// Break notifications and wake-ups, posted across worker threads.
#include "common/log.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/processor.hpp"
#include "smb2/engine/response_header.hpp"
#include "smb2/engine/send_path.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/engine/metrics.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint32_t SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED = 0x1;

// MS-SMB2 3.3.4.1.4: a session that encrypts (itself or through one of its
// trees) gets its unsolicited messages encrypted too.
state::Session* encrypting_session(ConnState& conn, uint64_t session_id) {
  state::Session* s = conn.find_session(session_id);
  if (!s || !conn.cipher || s->keys.encryption_key.empty()) return nullptr;
  if (s->encrypt_data) return s;
  for (const auto& [id, t] : s->trees)
    if (t->encrypt) return s;
  return nullptr;
}

// The notification for B as a message of its own, with the seal it goes
// out under.
ReadyMessage break_message(ConnState& conn, const state::BreakNotice& b) {
  if (conn.metrics) ++conn.metrics->breaks_sent;
  ReadyMessage m;
  Bytes& msg = m.message;
  ByteWriter w(msg);
  // Unsolicited: MessageId all ones, no session, tree or signature.
  wire::write_header(w, response_header({.command = wire::Command::OplockBreak, .message_id = 0xFFFFFFFFFFFFFFFFull}));
  if (b.is_oplock) {  // 2.2.23.1
    w.u16(24);
    w.u8(state::lease_bits_to_oplock(b.to_state));
    w.u8(0);
    w.u32(0);
    w.u64(b.persistent_id);
    w.u64(b.volatile_id);
  } else {  // 2.2.23.2
    w.u16(44);
    w.u16(b.version == 2 ? b.epoch : 0);
    w.u32(b.ack_required ? SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED : 0);
    w.bytes(b.key.data(), b.key.size());
    w.u32(b.from);
    w.u32(b.to_state);
    w.u32(0);  // BreakReason
    w.u32(0);  // AccessMaskHint
    w.u32(0);  // ShareMaskHint
  }
  // Unsolicited messages are not signed (3.3.4.1.1).
  if (state::Session* s = encrypting_session(conn, b.session_id)) {
    m.seal.encrypt = true;
    m.seal.session_id = s->session_id;
    m.seal.encryption_key = s->keys.encryption_key;
  }
  return m;
}

// MS-SMB2 3.3.4.7: a lease break goes to the client, on its oldest
// connection (smb2.lease.v2_complex1: a lease opened only on a second
// connection of the client breaks on the first) that holds a session of
// the user whose session holds the lease (the ClientGuid alone is no
// proof: anyone may send it); an oplock break, and a lease break when no
// such connection is known, to the connection of its holder. With
// multichannel (3.3.4.6), an oplock break goes to the holder while its
// session is held there, and else to the connection that holds the session
// now: the holder was a channel that is gone.
state::ConnAddress break_destination(ServerContext& server, const state::BreakNotice& b) {
  auto holder = server.sessions.find(b.session_id);
  if (!holder) return b.to;
  if (b.is_oplock) return holder->conn.worker == b.to.worker && holder->conn.conn_id == b.to.conn_id ? b.to : holder->conn;
  if (auto oldest = server.clients.oldest(b.client, holder->user)) return *oldest;
  return b.to;
}

}  // namespace

void write_break_notification(ConnState& conn, const state::BreakNotice& b, Bytes& out) {
  if (conn.overwrites_in_flight) {
    conn.held_breaks.push_back(b);
    return;
  }
  ReadyMessage m = break_message(conn, b);
  send_message(conn, out, m.message, m.seal);
}

namespace {

bool same_conn(const state::ConnAddress& a, const state::ConnAddress& b) {
  return a.worker == b.worker && a.conn_id == b.conn_id;
}

// Shared by the copies of the task that sends a break CAUSE waits for
// (ConnState::breaks_unsent). It ends when that task is done with: run
// (its break handed to the socket) or dropped with its connection. Then
// CAUSE's worker is told, and CAUSE sends its replies.
class BreakHandedOver {
 public:
  BreakHandedOver(ServerContext& server, const state::ConnAddress& cause) : server_(server), cause_(cause) {}
  BreakHandedOver(const BreakHandedOver&) = delete;
  BreakHandedOver& operator=(const BreakHandedOver&) = delete;
  ~BreakHandedOver() {
    try {
      post_to_conn(server_, cause_, [](ConnState& conn, Bytes&) {
        if (conn.breaks_unsent) --conn.breaks_unsent;
      });
    } catch (const std::exception& e) {  // out of memory: CAUSE's replies wait until it ends
      LOG_ERROR("a sent break could not be told to its cause: %s", e.what());
    }
  }

 private:
  ServerContext& server_;
  state::ConnAddress cause_;
};

// B's notification on connection TO, from a thread that is not TO's. With
// CAUSE (the connection whose request broke it, not TO), CAUSE's replies
// wait until the notification is in TO's socket.
void post_break(ServerContext& server, const state::BreakNotice& b, const state::ConnAddress& to, ConnState* cause) {
  if (!cause || !server.poster) {
    post_to_conn(server, to, [b](ConnState& conn, Bytes& out) { write_break_notification(conn, b, out); });
    return;
  }
  auto handed_over = std::make_shared<BreakHandedOver>(server, cause->address);
  ++cause->breaks_unsent;
  post_to_conn(server, to, [b, handed_over](ConnState& conn, Bytes& out) {
    write_break_notification(conn, b, out);
    conn.send_at_once = true;
  });
}

void post_breaks_from(ServerContext& server, const std::vector<state::BreakNotice>& breaks, ConnState* cause) {
  for (const auto& b : breaks) {
    if (b.to.worker == state::kNoConnectionWorker) {  // a kept durable open: nobody can answer
      if (b.ack_required) command_table().close_unreachable_holder(server, b);
      continue;
    }
    state::ConnAddress to = break_destination(server, b);
    if (cause && same_conn(to, cause->address)) {
      if (cause->overwrites_in_flight)
        cause->held_breaks.push_back(b);
      else
        cause->async.ready.push_back(break_message(*cause, b));  // right after this frame's responses
      continue;
    }
    post_break(server, b, to, cause);
  }
}

}  // namespace

void post_breaks(ServerContext& server, const std::vector<state::BreakNotice>& breaks) {
  post_breaks_from(server, breaks, nullptr);
}

void post_breaks(ServerContext& server, const std::vector<state::BreakNotice>& breaks, ConnState& current) {
  post_breaks_from(server, breaks, &current);
}

void break_read_caching(ServerContext& server, const std::shared_ptr<state::FileNode>& node, const void* owner,
                        ConnState& cause) {
  if (node && node->lease_count.load(std::memory_order_relaxed))
    post_breaks(server, server.files.break_readers(node, owner, monotonic_ms(), server.lease_break_timeout_ms),
                cause);
}

void release_held_breaks(ConnState& conn) {
  for (const auto& b : conn.held_breaks) conn.async.ready.push_back(break_message(conn, b));
  conn.held_breaks.clear();
}

namespace {

// A request run again when its file's breaks end: by an acknowledgment,
// or at the breaks' deadline (expire_pending).
bool waits_for_breaks(const WaitingRequest& w) { return w.kind == WaitKind::RunAgain && w.node; }

}  // namespace

bool has_expiring_waits(const ConnState& conn) {
  for (const auto& [id, w] : conn.async.waiting)
    if (waits_for_breaks(w)) return true;
  return false;
}

void expire_pending(ConnState& conn, ServerContext& server, int64_t now_ms) {
  std::vector<std::shared_ptr<state::FileNode>> nodes;
  for (auto& [id, w] : conn.async.waiting)
    if (waits_for_breaks(w)) nodes.push_back(w.node);
  for (auto& n : nodes) {
    std::vector<state::BreakNotice> further;  // re-breaks after a timed-out break
    auto wake = server.files.expire_breaks(n, now_ms, &further);
    post_breaks(server, further);
    post_wakeups(server, wake);
  }
}

}  // namespace ringsmb::smb2
