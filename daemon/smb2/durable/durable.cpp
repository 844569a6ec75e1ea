#include "smb2/durable/durable.hpp"

#include <fcntl.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

#include "common/log.hpp"
#include "config/config.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/create_context_chain.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/clock.hpp"
#include "smb2/files/close_open.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "state/durable_table.hpp"
#include "vfs/paths.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

// MS-SMB2 2.2.13.2.3, .4, .11, .12: the data of each context.
constexpr size_t kDhnqSize = 16, kDhncSize = 16, kDh2qSize = 32, kDh2cSize = 36;
// How long a SESSION_SETUP with PreviousSessionId waits at most for the
// old session's connection to end it (it runs on that connection's worker).
constexpr int64_t kPreviousSessionWaitMs = 2000;
// How long a reconnect waits for the connection that still holds the open.
constexpr int64_t kReconnectWaitMs = 2000;

void read_guid(ByteReader& r, state::Guid& g) {
  ByteSpan b = r.bytes(16);
  if (b.size() == 16) std::memcpy(g.data(), b.data(), 16);
}

using wire::create_context::kAppInstanceId;  // SMB2_CREATE_APP_INSTANCE_ID's name
constexpr size_t kAppInstanceIdSize = 20;  // StructureSize, Reserved, AppInstanceId

bool is_app_instance_id(const CreateContext& c) {
  return c.name.size() == sizeof(kAppInstanceId) &&
         std::memcmp(c.name.data(), kAppInstanceId, sizeof(kAppInstanceId)) == 0;
}

// SMB2_CREATE_APP_INSTANCE_ID into OUT (3.x only); false when too short.
bool read_app_instance_id(const CreateContext& c, DurableRequest& out) {
  if (c.data.size() < kAppInstanceIdSize) return false;
  ByteReader r(c.data);
  r.skip(4);  // StructureSize (20, MAY be checked), Reserved
  read_guid(r, out.app_instance_id);
  out.app_instance = true;
  return true;
}

// One durable context into OUT; false when it is too short.
bool read_durable_context(const CreateContext& c, bool smb3, DurableRequest& out) {
  ByteReader r(c.data);
  if (c.name == wire::create_context::kDurableRequest) {
    out.v1_request = true;
    return c.data.size() >= kDhnqSize;
  }
  if (c.name == wire::create_context::kDurableReconnect) {
    out.v1_reconnect = true;
    out.reconnect_id = {r.u64(), r.u64()};
    return c.data.size() >= kDhncSize;
  }
  if (!smb3) return true;  // the v2 contexts exist only in SMB 3.x
  if (c.name == wire::create_context::kDurableRequestV2) {
    out.v2_request = true;
    out.timeout_ms = r.u32();
    out.flags = r.u32();
    r.skip(8);  // Reserved
    read_guid(r, out.create_guid);
    return c.data.size() >= kDh2qSize;
  }
  if (c.name == wire::create_context::kDurableReconnectV2) {
    out.v2_reconnect = true;
    out.reconnect_id = {r.u64(), r.u64()};
    read_guid(r, out.create_guid);
    out.flags = r.u32();
    return c.data.size() >= kDh2cSize;
  }
  return true;
}

// Does the CREATE's name (UTF-16) name the open's file? Names compare
// without case, as the share's lookups do.
bool same_name(ByteSpan name, const state::Open& open) {
  auto p = vfs::parse_smb_path(name);
  return p && p->path.size() == open.path.size() && strcasecmp(p->path.c_str(), open.path.c_str()) == 0;
}

// MS-SMB2 3.3.5.9.7 / 3.3.5.9.12: may this request take the kept open?
NtStatus check_reconnect(const Request& req, ByteSpan name, const LeaseRequest& lease, const DurableRequest& d,
                         const state::KeptOpen& k) {
  const state::Open& open = *k.open;
  // A DH2C names the CreateGuid (a v1 open's is zero); either version
  // reconnects an open of the other (smb2.durable-v2-open.reopen2b).
  if (d.v2_reconnect && open.create_guid != d.create_guid) return NtStatus::ObjectNameNotFound;
  bool leased = open.oplock_level == state::kOplockLease && open.lease;
  if (leased) {
    if (k.client_guid != req.conn.client_guid) return NtStatus::ObjectNameNotFound;
    if (!lease.present || lease.key != open.lease->key) return NtStatus::ObjectNameNotFound;
    bool delete_on_close = open.create_options & 0x1000;  // FILE_DELETE_ON_CLOSE
    if (!delete_on_close && !same_name(name, open)) return NtStatus::InvalidParameter;
  } else if (lease.present) {
    return NtStatus::ObjectNameNotFound;  // asks for a lease the open never had
  }
  // Open.DurableOwner: only the user who opened it gets it back.
  if (k.owner != req.session->user) return NtStatus::AccessDenied;
  // The open's paths are relative to its share's root.
  if (k.share != req.tree->share.name) return NtStatus::ObjectNameNotFound;
  return NtStatus::Success;
}

// Does a CREATE with this CreateGuid wait for a break on CONN or another
// channel of its sessions (other than request SELF of CONN, a CREATE run
// again)? Only a replay asks: with multichannel it comes on another
// channel (the shape of smb2.replay.dhv2-pending3*), and the channels of a session
// share their tables, so they are all on this worker.
bool create_waits(ConnState& conn, const state::Guid& create_guid, uint64_t self) {
  auto waits_on = [&](const ConnState& c) {
    for (const auto& [id, w] : c.async.waiting)
      if (w.kind == WaitKind::RunAgain && w.has_create_guid && w.create_guid == create_guid &&
          (id != self || &c != &conn))
        return true;
    return false;
  };
  if (conn.tables->members.empty()) return waits_on(conn);
  return std::ranges::any_of(conn.tables->members, [&](const ConnState* m) { return waits_on(*m); });
}

void close_kept(ServerContext& server, state::KeptOpen k, const char* why) {
  LogClientScope about(k.client_address, k.owner, k.share);
  LOG_DEBUG("durable open %s (0x%llx) closed: %s", k.open->path.c_str(), (unsigned long long)k.open->persistent_id,
            why);
  int root = k.share_root ? k.share_root->fd.get() : -1;
  RestoreIdentity restore;  // a break closes it in another user's request
  release_open(server, std::move(k.open), root, k.identity, k.client_guid, k.recycle.get());
}

state::Tree* tree_of(ConnState& conn, const state::Open& open) {
  state::Session* s = conn.find_session(open.session_id);
  if (!s || s->state != state::Session::State::Valid) return nullptr;
  auto t = s->trees.find(open.tree_id);
  return t == s->trees.end() ? nullptr : t->second.get();
}

// A CREATE on another worker may break the lease between the moment its
// holder became `nowhere` and the moment the open entered the durable
// table: that break's close_unreachable_holder found nothing to close, and
// the CREATE would wait out the break timeout for an answer nobody can
// give (smb2.durable-open.lease, 1 run in 10). A break seen now closes the
// kept open here; the durable table hands it to one of the two only.
void close_if_break_raced(ServerContext& server, const std::shared_ptr<state::FileNode>& node,
                          const state::Lease& lease, const state::ConnAddress& nowhere) {
  if (!server.files.breaking_toward(node, lease, nowhere)) return;
  state::BreakNotice b;
  b.to = nowhere;
  b.ack_required = true;
  close_unreachable_holder(server, b);
}

// 3.3.7.1: kept only while it holds its batch oplock or a lease with H.
bool keep_one(ConnState& conn, ServerContext& server, std::unique_ptr<state::Open>& slot, int64_t now_ms) {
  state::Open& o = *slot;
  state::Tree* tree = tree_of(conn, o);
  if (!o.outlives_connection() || !o.node || !tree || !tree->root) return false;
  state::ConnAddress nowhere{state::kNoConnectionWorker, o.persistent_id};
  if (o.resilient) {
    // Kept whatever it caches; its breaks, if any, find no connection.
    if (o.lease) server.files.move_lease_holder(o.node, *o.lease, 0, conn.address, nowhere, 0, false);
  } else if (!o.lease ||
             !server.files.move_lease_holder(o.node, *o.lease, state::kLeaseHandle, conn.address, nowhere, 0, false)) {
    return false;
  }
  state::KeptOpen k;
  k.client_guid = conn.client_guid;
  k.owner = conn.find_session(o.session_id)->user;
  k.client_address = conn.client_address;
  k.share = tree->share.name;
  k.share_root = server.durables.share_root(tree->root.get(), &server.budget.open_files);
  if (tree->share.recycle.enabled) k.recycle = std::make_shared<const config::RecycleConfig>(tree->share.recycle);
  k.identity = tree->identity;
  k.deadline_ms = now_ms + o.durable_timeout_ms;
  k.worker = conn.address.worker;
  k.open = std::move(slot);
  LOG_DEBUG("%s: durable open %s (0x%llx) kept for %u ms", conn.client_address.c_str(), k.open->path.c_str(),
            (unsigned long long)k.open->persistent_id, k.open->durable_timeout_ms);
  std::shared_ptr<state::FileNode> node = k.open->node;
  std::shared_ptr<state::Lease> lease = k.open->resilient ? nullptr : k.open->lease;  // resilient: kept breaking
  post_wakeups(server, server.durables.keep(std::move(k)));
  if (conn.metrics) ++conn.metrics->durable_kept;
  if (lease) close_if_break_raced(server, node, *lease, nowhere);
  return true;
}

// Ends session SID on this connection as LOGOFF would, its durable opens
// kept (3.3.5.5.3). Runs on the connection's worker between frames.
void end_session_here(ConnState& conn, ServerContext& server, uint64_t sid) {
  state::Session* s = conn.find_session(sid);
  if (!s) return;
  keep_or_close_session_opens(conn, server, sid);
  withdraw_session(conn, server, sid);
  if (conn.client_registered) server.clients.remove_session(conn.client_guid, conn.address, sid);
  if (s->state == state::Session::State::Valid && server.control) server.control->logout(s->user);
  if (s->state == state::Session::State::InProgress) --conn.sessions_in_progress;
  LOG_INFO("%s: session 0x%llx of '%s' ended: its client reconnected", conn.client_address.c_str(),
           (unsigned long long)sid, s->user.c_str());
  server.sessions.remove(sid);
  conn.tables->sessions.erase(sid);
}

}  // namespace

void keep_or_close_session_opens(ConnState& conn, ServerContext& server, uint64_t sid) {
  keep_durable_opens(conn, server, sid);
  std::vector<uint64_t> to_close;
  for (auto& [vid, open] : conn.tables->opens)
    if (open->session_id == sid) to_close.push_back(vid);
  std::sort(to_close.begin(), to_close.end());
  for (uint64_t vid : to_close) close_open(conn, server, vid);
}

NtStatus find_durable_request(const Request& req, ByteSpan buffer, DurableRequest& out) {
  if (buffer.empty()) return NtStatus::Success;
  bool bad = false;
  bool smb3 = req.conn.is_smb3();
  bool ok = for_each_create_context(buffer, [&](const CreateContext& c) {
    if (c.name.size() == 4 && c.name[0] == 'D' && c.name[1] == 'H' && !read_durable_context(c, smb3, out)) bad = true;
    if (smb3 && is_app_instance_id(c) && !read_app_instance_id(c, out)) bad = true;
  });
  if (!ok || bad) return NtStatus::InvalidParameter;
  // 3.3.5.9.7, 3.3.5.9.10, 3.3.5.9.12: v1 and v2 do not mix, nor do a v2
  // request and a reconnect.
  bool v1 = out.v1_request || out.v1_reconnect, v2 = out.v2_request || out.v2_reconnect;
  if ((v1 && v2) || (out.v2_request && out.v2_reconnect)) return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

NtStatus find_replayed_open(Request& req, const DurableRequest& d, state::Open*& out) {
  out = nullptr;
  bool replay = req.hdr.flags & wire::SMB2_FLAGS_REPLAY_OPERATION;
  // The CREATE being replayed still waits for a break: it has no open to
  // give back yet, and a second open would wait beside it. The client is
  // told to try again (what Samba answers; Windows answers
  // STATUS_ACCESS_DENIED, smb2.replay.dhv2-pending1*-windows).
  if (replay && create_waits(req.conn, d.create_guid, req.async_id)) return NtStatus::FileNotAvailable;
  auto id = req.server.durables.find_create_guid(req.conn.client_guid, d.create_guid);
  if (!id) return NtStatus::Success;
  auto it = req.conn.tables->opens.find(*id);
  if (it == req.conn.tables->opens.end()) {
    // Kept, or on another connection of the client: not given back here
    // (no multichannel), but not opened twice by a CREATE that is no replay.
    return replay ? NtStatus::Success : NtStatus::DuplicateObjectid;
  }
  state::Open& open = *it->second;
  if (!open.replay_eligible) return NtStatus::Success;  // used since: 3.3.5.9.10 finds no open
  if (!replay) return NtStatus::DuplicateObjectid;
  if (open.session_id != req.session->session_id || open.tree_id != req.tree->tree_id) return NtStatus::Success;
  out = &open;
  return NtStatus::Success;
}

void answer_durable(const state::Open& open, Bytes& contexts) {
  uint8_t data[8] = {};
  if (!open.durable_version) return;  // a replayed DH2Q open that was not made durable
  if (open.durable_version == 2) {
    store_le32(data, open.durable_timeout_ms);  // Flags stay 0: never persistent
    append_create_context(contexts, wire::create_context::kDurableRequestV2, data);
  } else {
    append_create_context(contexts, wire::create_context::kDurableRequest, data);  // Reserved
  }
}

namespace {

// 3.3.5.9.10: Open.CreateGuid, in the index a replayed CREATE looks in.
void remember_create_guid(Request& req, const DurableRequest& d, state::Open& open, uint32_t create_action) {
  open.create_guid = d.create_guid;
  open.create_action = uint8_t(create_action);
  open.replay_eligible = true;
  open.create_guid_indexed = true;
  req.server.durables.index_create_guid(req.conn.client_guid, d.create_guid, open.persistent_id);
}

}  // namespace

void grant_durable(Request& req, const DurableRequest& d, state::Open& open, uint32_t create_action,
                   Bytes& contexts) {
  if (!d.request()) return;
  // 3.3.5.9.10: every DH2Q open takes the CreateGuid, durable or not: a
  // replay of its CREATE gets it back (smb2.replay.dhv2-pending1n-*).
  if (d.v2_request) remember_create_guid(req, d, open, create_action);
  if (open.is_directory || !open.lease) return;
  // 3.3.5.9.6 / 3.3.5.9.10: only with a batch oplock or a lease with H.
  bool handle_cached = open.oplock_level == state::kOplockBatch ||
                       (open.oplock_level == state::kOplockLease && (open.lease->state & state::kLeaseHandle));
  if (!handle_cached) return;
  ServerContext& server = req.server;
  open.durable_version = d.v2_request ? 2 : 1;
  open.create_action = uint8_t(create_action);
  open.durable_timeout_ms = server.durable_timeout_ms;
  if (d.v2_request && d.timeout_ms) open.durable_timeout_ms = std::min(d.timeout_ms, server.durable_max_timeout_ms);
  server.durables.set_live(open.persistent_id, req.conn.address);
  if (!open.lock_sequences) open.lock_sequences = std::make_unique<state::LockSequences>();
  answer_durable(open, contexts);
}

Result<state::Open*> reconnect_durable(Request& req, ByteSpan name, const LeaseRequest& lease,
                                       const DurableRequest& d) {
  auto kept = req.server.durables.take(d.reconnect_id.persistent, [&](const state::KeptOpen& k) {
    return check_reconnect(req, name, lease, d, k);
  });
  if (!kept) return Unexpected(kept.error());
  std::unique_ptr<state::Open> open = std::move(kept->open);
  open->session_id = req.session->session_id;
  open->tree_id = req.tree->tree_id;
  open->outstanding_requests = open->outstanding_pre_requests = 0;  // none came along
  state::ConnAddress nowhere{state::kNoConnectionWorker, 0};
  if (open->lease)  // a resilient open may cache nothing
    req.server.files.move_lease_holder(open->node, *open->lease, 0, nowhere, req.conn.address, open->session_id, true);
  LOG_DEBUG("%s: durable open %s (0x%llx) reconnected", req.conn.client_address.c_str(), open->path.c_str(),
            (unsigned long long)open->persistent_id);
  req.server.durables.set_live(open->persistent_id, req.conn.address);
  if (req.conn.metrics) ++req.conn.metrics->durable_reconnected;
  state::Open* raw = open.get();
  req.conn.tables->opens.emplace(open->volatile_id, std::move(open));
  return raw;
}

NtStatus request_resiliency(Request& req, state::Open& open, ByteSpan input) {
  ServerContext& server = req.server;
  if (req.conn.dialect == config::kDialect202) return NtStatus::InvalidDeviceRequest;
  if (req.conn.tables->pipes.contains(open.volatile_id) || !open.node) return NtStatus::NotSupported;
  if (input.size() < 8) return NtStatus::InvalidParameter;  // NETWORK_RESILIENCY_REQUEST: Timeout, Reserved
  uint32_t timeout_ms = load_le32(input.data());
  if (timeout_ms > server.durable_max_timeout_ms) return NtStatus::InvalidParameter;  // MaxResiliencyTimeout
  open.resilient = true;
  open.durable_timeout_ms = timeout_ms ? timeout_ms : server.durable_timeout_ms;
  if (!open.lock_sequences) open.lock_sequences = std::make_unique<state::LockSequences>();
  server.durables.set_live(open.persistent_id, req.conn.address);
  LOG_DEBUG("%s: %s (0x%llx) resilient for %u ms", req.conn.client_address.c_str(), open.path.c_str(),
            (unsigned long long)open.persistent_id, open.durable_timeout_ms);
  return NtStatus::Success;
}

NtStatus withdraw_reconnect(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason) {
  server.durables.cancel_wait(w.durable_id, {conn.address, w.async_id});
  return NtStatus::Cancelled;
}

NtStatus wait_for_reconnect(Request& req, const DurableRequest& d) {
  if (req.async_id || !has_room_to_wait(req)) return NtStatus::ObjectNameNotFound;
  uint64_t id = d.reconnect_id.persistent;
  state::Waiter me{req.conn.address, next_async_id(req.conn)};
  if (!req.server.durables.wait_for_live(id, req.conn.address, me, monotonic_ms() + kReconnectWaitMs))
    return NtStatus::ObjectNameNotFound;
  WaitingRequest w;
  w.kind = WaitKind::RunAgain;  // the chain runs again when the open is kept (or the wait ends)
  w.durable_id = id;
  w.withdraw = withdraw_reconnect;
  NtStatus st = start_waiting(req, std::move(w));
  if (st == NtStatus::Pending) return st;
  req.server.durables.cancel_wait(id, me);
  return NtStatus::ObjectNameNotFound;
}

void remember_app_instance(Request& req, const DurableRequest& d, state::Open& open, std::string_view path) {
  open.app_instance_id = d.app_instance_id;
  open.app_instance_indexed = true;
  req.server.durables.index_app_instance(
      d.app_instance_id, {req.conn.client_guid, req.session->user, req.tree->share.name, std::string(path),
                          open.persistent_id, open.volatile_id});
  // Where it lives, so that the application's next CREATE can wait for its close.
  req.server.durables.set_live(open.persistent_id, req.conn.address);
}

namespace {

// Closes the open of another connection (on that connection's worker),
// unless it is gone or closed meanwhile.
void close_on_its_connection(ServerContext& server, const state::ConnAddress& at, const state::AppInstanceOpen& o) {
  uint64_t vid = o.volatile_id, pid = o.persistent_id;
  post_to_conn(server, at, [&server, vid, pid](ConnState& conn, Bytes&) {
    auto it = conn.tables->opens.find(vid);
    if (it == conn.tables->opens.end() || it->second->persistent_id != pid) return;
    LOG_INFO("%s: %s closed: its application instance opened it again elsewhere", conn.client_address.c_str(),
             it->second->path.c_str());
    RestoreIdentity restore;
    close_open(conn, server, vid);
  });
}

}  // namespace

NtStatus close_previous_app_instance(Request& req, const DurableRequest& d, std::string_view path) {
  ServerContext& server = req.server;
  auto previous = server.durables.find_app_instance(d.app_instance_id, req.conn.client_guid, req.session->user,
                                                    req.tree->share.name, path);
  bool waits = false;
  for (const state::AppInstanceOpen& o : previous) {
    auto kept = server.durables.take(o.persistent_id, [](const state::KeptOpen&) { return NtStatus::Success; });
    if (kept) {
      close_kept(server, std::move(*kept), "its application instance opened it again");
      continue;
    }
    auto at = server.durables.live_at(o.persistent_id);
    if (!at || req.async_id || !has_room_to_wait(req)) continue;  // the share modes decide
    state::Waiter me{req.conn.address, next_async_id(req.conn)};
    if (waits || !server.durables.wait_for_live(o.persistent_id, req.conn.address, me,
                                               monotonic_ms() + kReconnectWaitMs))
      continue;  // one wait per CREATE: the others are closed meanwhile too
    close_on_its_connection(server, *at, o);
    WaitingRequest w;
    w.kind = WaitKind::RunAgain;  // the chain runs again when the open is closed (or the wait ends)
    w.durable_id = o.persistent_id;
    w.withdraw = withdraw_reconnect;
    if (start_waiting(req, std::move(w)) != NtStatus::Pending) {
      server.durables.cancel_wait(o.persistent_id, me);
      continue;
    }
    waits = true;
  }
  return waits ? NtStatus::Pending : NtStatus::Success;
}

void keep_durable_opens(ConnState& conn, ServerContext& server, uint64_t session_id) {
  int64_t now_ms = monotonic_ms();
  for (auto it = conn.tables->opens.begin(); it != conn.tables->opens.end();) {
    bool mine = !session_id || it->second->session_id == session_id;
    if (mine && it->second->outlives_connection() && !conn.tables->pipes.contains(it->first)) {
      withdraw_open(conn, server, it->first);
      if (keep_one(conn, server, it->second, now_ms)) {
        it = conn.tables->opens.erase(it);
        continue;
      }
    }
    ++it;
  }
}

size_t expire_durable_opens(ServerContext& server, uint32_t worker, int64_t now_ms) {
  post_wakeups(server, server.durables.expire_waits(now_ms, worker));
  size_t expired = 0;
  for (state::KeptOpen& k : server.durables.expire(now_ms, worker)) {
    close_kept(server, std::move(k), "timed out");
    ++expired;
  }
  return expired;
}

void close_unreachable_holder(ServerContext& server, const state::BreakNotice& b) {
  // The holder's conn_id is the persistent id of the last open kept with
  // that lease; every kept open of the lease goes (they share its state).
  state::Lease* lease = nullptr;
  auto first = server.durables.take(b.to.conn_id, [&](const state::KeptOpen& k) {
    lease = k.open->lease.get();
    return NtStatus::Success;
  });
  if (!first) return;
  std::vector<state::KeptOpen> all = server.durables.take_lease(lease);
  close_kept(server, std::move(*first), "a break it cannot answer");
  for (state::KeptOpen& k : all) close_kept(server, std::move(k), "a break it cannot answer");
}

bool close_kept_open(ServerContext& server, uint64_t persistent_id) {
  auto kept = server.durables.take(persistent_id, [](const state::KeptOpen&) { return NtStatus::Success; });
  if (!kept) return false;
  close_kept(server, std::move(*kept), "closed by the administrator");
  return true;
}

void close_kept_opens(ServerContext& server) {
  for (state::KeptOpen& k : server.durables.take_all()) close_kept(server, std::move(k), "shutdown");
}

void end_previous_session(Request& req, uint64_t previous_session_id, const std::string& user) {
  auto home = req.server.sessions.find(previous_session_id);
  if (!home || home->user != user) return;  // 3.3.5.5.3: only the same user's session
  ServerContext& server = req.server;
  state::ConnAddress me = req.conn.address;
  int64_t held = std::max(req.conn.hold_replies_until_ms, monotonic_ms() + kPreviousSessionWaitMs);
  req.conn.hold_replies_until_ms = held;
  post_to_conn(server, home->conn, [&server, previous_session_id, me, held](ConnState& conn, Bytes&) {
    end_session_here(conn, server, previous_session_id);
    // Done: the reconnecting connection's reply may go (the transport
    // releases a hold that has passed after a posted task).
    post_to_conn(server, me, [held](ConnState& c, Bytes&) {
      if (c.hold_replies_until_ms == held) c.hold_replies_until_ms = 1;
    });
  });
}

}  // namespace ringsmb::smb2
