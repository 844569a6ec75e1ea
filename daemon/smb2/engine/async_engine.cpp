#include "smb2/engine/async_engine.hpp"

#include <algorithm>
#include <utility>

#include "common/log.hpp"
#include "smb2/engine/channel_sequence.hpp"
#include "smb2/engine/response_header.hpp"
#include "smb2/engine/send_path.hpp"

namespace ringsmb::smb2 {
namespace {

// The seal of the final response: as the request was protected. The keys
// are copied: the session may be gone when the request completes.
ResponseSeal seal_for(const Request& req) {
  ResponseSeal seal;
  const state::Session& s = *req.session;
  seal.session_id = s.session_id;
  seal.encrypt = req.encrypted;
  seal.sign = !req.encrypted && (req.hdr.is_signed() || s.signing_required);
  if (seal.encrypt) seal.encryption_key = s.keys.encryption_key;
  if (seal.sign) seal.signing_key = s.signing_key_for(req.conn.address.conn_id);
  return seal;
}

// A detached request's MessageId is another connection's: a CANCEL on
// this one never names it.
void insert(ConnState& conn, WaitingRequest&& w) {
  ++conn.async.per_session[w.session_id];
  if (!conn.async.detached.contains(w.async_id)) conn.async.by_message_id[w.message_id] = w.async_id;
  uint64_t id = w.async_id;
  conn.async.waiting.insert_or_assign(id, std::move(w));
}

// Takes the request at IT out of the table and its indexes.
WaitingRequest unlist(ConnState& conn, std::map<uint64_t, WaitingRequest>::iterator it) {
  WaitingRequest w = std::move(it->second);
  conn.async.waiting.erase(it);
  auto m = conn.async.by_message_id.find(w.message_id);
  if (m != conn.async.by_message_id.end() && m->second == w.async_id) conn.async.by_message_id.erase(m);
  auto s = conn.async.per_session.find(w.session_id);
  if (s != conn.async.per_session.end() && --s->second == 0) conn.async.per_session.erase(s);
  return w;
}

WaitingRequest erase(ConnState& conn, std::map<uint64_t, WaitingRequest>::iterator it) {
  WaitingRequest w = unlist(conn, it);
  if (w.interim_wanted) *w.interim_wanted = false;
  leave_channel_sequence(conn, w.channel);
  return w;
}

// A response of waiting request W. ASYNC: with its AsyncId (an interim,
// or the final response after one, 3.3.4.4); otherwise the ordinary
// synchronous response of a request whose interim was never sent. The
// credits go with the first response the client sees.
Bytes waiting_response(const WaitingRequest& w, NtStatus status, ByteSpan body, bool async, uint16_t credits) {
  Bytes msg;
  ByteWriter bw(msg);
  wire::write_header(bw, response_header({.command = w.command,
                                          .status = status,
                                          .message_id = w.message_id,
                                          .session_id = w.session_id,
                                          .tree_id = w.tree_id,
                                          .async_id = async ? w.async_id : 0,
                                          .credit_charge = w.credit_charge,
                                          .credits = credits}));
  if (nt_success(status) && !body.empty())
    bw.bytes(body);
  else
    write_error_body(bw);
  return msg;
}

// Withdraws every waiting request MATCHES selects, oldest first.
template <typename Pred>
void withdraw_if(ConnState& conn, ServerContext& server, WithdrawReason why, Pred matches) {
  std::vector<uint64_t> ids;
  for (const auto& [id, w] : conn.async.waiting)
    if (matches(w)) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = conn.async.waiting.find(id);
    if (it == conn.async.waiting.end()) continue;
    WaitingRequest& w = it->second;
    NtStatus status = w.withdraw ? w.withdraw(server, conn, w, why) : NtStatus::Cancelled;
    if (status == NtStatus::Pending) continue;  // completed elsewhere; its completion is on its way
    if (why == WithdrawReason::ConnectionLost) {
      erase(conn, it);
    } else if (w.kind == WaitKind::RunAgain) {
      conn.async.reruns.emplace_back(id, true);  // its chain answers, the waiting element with STATUS_CANCELLED
    } else {
      complete(conn, id, status);
    }
  }
}

}  // namespace

bool has_room_to_wait(const ConnState& conn, const ServerContext& server, uint64_t session_id) {
  const AsyncTable& t = conn.async;
  if (t.waiting.size() >= server.max_async_per_connection) return false;
  auto s = t.per_session.find(session_id);
  return s == t.per_session.end() || s->second < server.max_async_per_session;
}

bool has_room_to_wait(const Request& req) {
  return has_room_to_wait(req.conn, req.server, req.session ? req.session->session_id : 0);
}

NtStatus start_waiting(Request& req, WaitingRequest&& w) {
  const CommandSpec* spec = command_spec(req.hdr.command);
  if (!spec || !spec->may_go_async || !req.session) return NtStatus::InvalidParameter;
  bool rerun = req.async_id != 0;  // a CREATE run again keeps its AsyncId (and its place in the limits)
  if (!rerun && !has_room_to_wait(req)) {
    LOG_DEBUG("%s: %s mid %llu: too many waiting requests", req.conn.client_address.c_str(), spec->name,
              (unsigned long long)req.hdr.message_id);
    return NtStatus::InsufficientResources;
  }
  w.async_id = rerun ? req.async_id : req.conn.async.next_id++;
  w.message_id = req.hdr.message_id;
  w.command = req.hdr.command;
  w.credit_charge = req.hdr.credit_charge;
  w.session_id = req.session->session_id;
  w.tree_id = req.tree ? req.tree->tree_id : req.hdr.tree_id;
  w.seal = seal_for(req);
  w.channel = std::exchange(req.channel, {});  // the waiting request gives it back
  req.async_id = w.async_id;
  insert(req.conn, std::move(w));
  return NtStatus::Pending;
}

WaitingRequest* find_waiting(ConnState& conn, uint64_t async_id) {
  auto it = conn.async.waiting.find(async_id);
  return it == conn.async.waiting.end() ? nullptr : &it->second;
}

std::optional<WaitingRequest> take_waiting(ConnState& conn, uint64_t async_id) {
  auto it = conn.async.waiting.find(async_id);
  if (it == conn.async.waiting.end()) return std::nullopt;
  return erase(conn, it);
}

bool complete(ConnState& conn, uint64_t async_id, NtStatus status, ByteSpan body) {
  auto it = conn.async.waiting.find(async_id);
  if (it == conn.async.waiting.end()) return false;
  WaitingRequest w = erase(conn, it);
  if (conn.async.detached.erase(async_id)) return true;  // nobody to answer
  bool sync = w.interim_deferred;  // no interim went out: answer as if it never waited
  Bytes msg = waiting_response(w, status, body, !sync, sync ? w.deferred_credits : 0);
  conn.async.ready.push_back({std::move(msg), std::move(w.seal)});
  return true;
}

void send_deferred_interim(ConnState& conn, uint64_t async_id) {
  WaitingRequest* w = find_waiting(conn, async_id);
  if (!w || !w->interim_deferred) return;  // completed, or its interim went out with its frame
  w->interim_deferred = false;
  conn.async.ready.push_back({waiting_response(*w, NtStatus::Pending, {}, true, w->deferred_credits), w->seal});
}

void cancel_request(ConnState& conn, ServerContext& server, const wire::Header& cancel) {
  uint64_t id = cancel.async_id;
  if (!cancel.is_async()) {
    auto m = conn.async.by_message_id.find(cancel.message_id);
    if (m == conn.async.by_message_id.end()) return;  // answered already, or never ours
    id = m->second;
  }
  if (!conn.async.waiting.count(id)) return;
  withdraw_if(conn, server, WithdrawReason::Cancel, [id](const WaitingRequest& x) { return x.async_id == id; });
}

void withdraw_open(ConnState& conn, ServerContext& server, uint64_t volatile_id) {
  if (conn.async.waiting.empty()) return;  // the common CLOSE
  withdraw_if(conn, server, WithdrawReason::Close,
              [volatile_id](const WaitingRequest& w) { return w.volatile_id == volatile_id; });
}

void withdraw_tree(ConnState& conn, ServerContext& server, uint64_t session_id, uint32_t tree_id) {
  withdraw_if(conn, server, WithdrawReason::TreeDisconnect, [=](const WaitingRequest& w) {
    return w.session_id == session_id && w.tree_id == tree_id;
  });
}

void withdraw_session(ConnState& conn, ServerContext& server, uint64_t session_id) {
  withdraw_if(conn, server, WithdrawReason::Logoff,
              [session_id](const WaitingRequest& w) { return w.session_id == session_id; });
}

void withdraw_all(ConnState& conn, ServerContext& server) {
  withdraw_if(conn, server, WithdrawReason::ConnectionLost, [](const WaitingRequest&) { return true; });
  conn.async.waiting.clear();  // those completed elsewhere: nobody left to answer
  conn.async.per_session.clear();
  conn.async.by_message_id.clear();
  conn.async.ready.clear();
  conn.async.reruns.clear();
  conn.async.detached.clear();
}

uint64_t hand_over_waiting(ConnState& from, ConnState& to, uint64_t async_id) {
  auto it = from.async.waiting.find(async_id);
  if (it == from.async.waiting.end()) return 0;
  WaitingRequest w = unlist(from, it);  // its ChannelSequence count goes with it: the tables are shared
  from.async.detached.erase(async_id);
  w.async_id = to.async.next_id++;
  w.interim_deferred = false;  // no interim is owed on TO
  to.async.detached.insert(w.async_id);
  uint64_t id = w.async_id;
  insert(to, std::move(w));
  return id;
}

}  // namespace ringsmb::smb2
