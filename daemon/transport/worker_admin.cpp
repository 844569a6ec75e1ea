// The admin side of a worker: status snapshots and closing a session, run
// on the worker's own thread through Worker::post (admin_endpoint.cpp), so
// they see the connections between two requests, never in the middle of one.
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/log.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {
namespace {

uint32_t session_flags(const state::Session& s) {
  uint32_t f = 0;
  if (s.signing_required || s.seen_signed) f |= ipc::abi::SESSION_SIGNED;
  if (s.encrypt_data || s.seen_encrypted) f |= ipc::abi::SESSION_ENCRYPTED;
  if (s.is_guest) f |= ipc::abi::SESSION_GUEST;
  if (s.is_anonymous) f |= ipc::abi::SESSION_ANONYMOUS;
  return f;
}

uint32_t open_flags(const state::Open& o, bool lease_breaking) {
  uint32_t f = 0;
  if (o.is_directory) f |= ipc::abi::OPEN_DIRECTORY;
  if (o.durable_version) f |= ipc::abi::OPEN_DURABLE;
  if (o.resilient) f |= ipc::abi::OPEN_RESILIENT;
  if (lease_breaking) f |= ipc::abi::OPEN_LEASE_BREAKING;
  return f;
}

// The caching and the byte-range locks of an open, read under the file's
// shard locks (other workers change them); true when a break of its lease
// or oplock awaits the client. OWNER is the Open (the lock table's key,
// only compared), NODE and LEASE its own.
bool add_caching_and_locks(smb2::ServerContext& ctx, const void* owner, const std::shared_ptr<state::FileNode>& node,
                           const std::shared_ptr<state::Lease>& lease, ipc::OpenFileStatus& out) {
  bool breaking = false;
  if (lease && node) {
    state::CacheGrant g = ctx.files.current_grant(node, lease);
    out.oplock_level = g.oplock_level;
    out.lease_state = g.lease_state;
    breaking = g.lease_breaking;
    if (!lease->is_oplock) {
      std::array<uint8_t, 16> key{};
      std::copy(lease->key.begin(), lease->key.end(), key.begin());
      out.lease_key = key;
    }
  }
  if (!node) return breaking;
  std::vector<state::ByteRange> locks = ctx.locks.locks_of(node->device, node->inode, owner);
  out.lock_count = uint32_t(locks.size());
  for (size_t i = 0; i < locks.size() && i < ipc::abi::kMaxLocksPerEntry; ++i)
    out.locks.push_back({locks[i].offset, locks[i].length, locks[i].exclusive});
  return breaking;
}

void add_open_details(smb2::ServerContext& ctx, const state::Open& o, ipc::OpenFileStatus& out) {
  out.file_id = o.persistent_id;
  out.flags = open_flags(o, add_caching_and_locks(ctx, &o, o.node, o.lease, out));
}

static_assert(ipc::abi::kMaxChannelsPerEntry >= state::kMaxChannelsPerSession,
              "LIST_SESSIONS lists every channel of a session");

// The channels of session S, held by connection ST: each one's connection
// shares ST's tables (a binding moves the connection to this worker).
// WORKER_BITS make the ids those of the connection entries.
std::vector<ipc::ChannelStatus> channels_of(const state::Session& s, const smb2::ConnState& st, uint64_t worker_bits) {
  std::vector<ipc::ChannelStatus> out;
  auto add = [&](const smb2::ConnState& m) {
    out.push_back({worker_bits | m.address.conn_id, m.client_address, m.client_port});
  };
  if (s.channels.empty()) add(st);
  for (const state::Channel& ch : s.channels) {
    if (ch.conn_id == st.address.conn_id) {
      add(st);
      continue;
    }
    for (const smb2::ConnState* m : st.tables->members)
      if (m->address.conn_id == ch.conn_id) add(*m);
  }
  return out;
}

}  // namespace

void Worker::collect_status(ipc::ServerStatus& out) const {
  for (const auto& [id, c] : conns_) {
    if (c->closing) continue;
    const smb2::ConnState& st = c->state;
    // Connection ids are per worker; the worker index makes them unique.
    uint64_t conn_id = (uint64_t(index_) << 48) | id;
    out.connections.push_back({conn_id, st.client_address, st.dialect});
    // Tables shared by channels (smb2::SessionTables) are listed once, under
    // the connection that holds each session (its first channel).
    bool lists_opens = st.tables->members.empty() || st.tables->members.front() == &st;
    for (const auto& [sid, s] : st.tables->sessions) {
      if (s->state != state::Session::State::Valid) continue;
      if (!s->channels.empty() && s->channels.front().conn_id != id) continue;
      out.sessions.push_back({sid, conn_id, s->user, st.client_address, st.dialect, session_flags(*s),
                              channels_of(*s, st, uint64_t(index_) << 48)});
      for (const auto& [tid, t] : s->trees) out.trees.push_back({sid, tid, t->share.name, s->user, st.client_address});
    }
    for (const auto& [vid, o] : st.tables->opens) {
      if (!lists_opens) break;
      const state::Session* s = nullptr;
      if (auto it = st.tables->sessions.find(o->session_id); it != st.tables->sessions.end()) s = it->second.get();
      std::string share;
      if (s)
        if (auto t = s->trees.find(o->tree_id); t != s->trees.end()) share = t->second->share.name;
      out.open_files.push_back({o->session_id, o->tree_id, share, o->path, s ? s->user : std::string(),
                                st.client_address});
      add_open_details(ctx_, *o, out.open_files.back());
    }
  }
}

void Worker::collect_kept_opens(ipc::ServerStatus& out) const {
  // Copied under the durable table's lock, detailed after it: the file
  // and lock tables have locks of their own (the Open is then only a key).
  struct Kept {
    ipc::OpenFileStatus row;
    const void* owner;
    std::shared_ptr<state::FileNode> node;
    std::shared_ptr<state::Lease> lease;
  };
  std::vector<Kept> kept;
  int64_t now = smb2::monotonic_ms();
  ctx_.durables.for_each_kept([&](const state::KeptOpen& k) {
    const state::Open& o = *k.open;
    ipc::OpenFileStatus row{o.session_id, o.tree_id, k.share, o.path, k.owner, k.client_address};
    row.file_id = o.persistent_id;
    row.flags = open_flags(o, false) | ipc::abi::OPEN_DISCONNECTED;
    row.kept_for_ms = uint32_t(std::clamp<int64_t>(k.deadline_ms - now, 0, UINT32_MAX));
    kept.push_back({std::move(row), &o, o.node, o.lease});
  });
  for (Kept& k : kept) {
    if (add_caching_and_locks(ctx_, k.owner, k.node, k.lease, k.row)) k.row.flags |= ipc::abi::OPEN_LEASE_BREAKING;
    out.open_files.push_back(std::move(k.row));
  }
}

bool Worker::close_kept_file(uint64_t file_id) {
  if (!smb2::close_kept_open(ctx_, file_id)) return false;
  LOG_INFO("disconnected durable open 0x%llx closed by the administrator", static_cast<unsigned long long>(file_id));
  return true;
}

bool Worker::close_session(uint64_t session_id) {
  for (auto& [id, c] : conns_) {
    smb2::ConnState& st = c->state;
    auto it = st.tables->sessions.find(session_id);
    if (it == st.tables->sessions.end() || c->closing) continue;
    std::vector<uint64_t> to_close;
    for (const auto& [vid, o] : st.tables->opens)
      if (o->session_id == session_id) to_close.push_back(vid);
    for (uint64_t vid : to_close) smb2::close_open(st, ctx_, vid);
    std::string user = it->second->user;
    LogClientScope about(st.client_address, user);
    if (it->second->state == state::Session::State::Valid && ctx_.control) ctx_.control->logout(user);
    st.tables->sessions.erase(it);
    ctx_.sessions.remove(session_id);
    LOG_INFO("%s: session 0x%llx of '%s' closed by the administrator", st.client_address.c_str(),
             static_cast<unsigned long long>(session_id), user.c_str());
    // A client keeps using a connection whose session vanished and gets
    // USER_SESSION_DELETED for every request; without other sessions the
    // connection is of no use, and dropping it makes the client notice.
    if (st.tables->sessions.empty()) drop(*c, "session closed by the administrator");
    return true;
  }
  return false;
}

}  // namespace ringsmb::transport

namespace ringsmb::transport {

bool Worker::close_file(uint64_t file_id) {
  for (auto& [id, c] : conns_) {
    smb2::ConnState& st = c->state;
    if (c->closing) continue;
    auto it = std::find_if(st.tables->opens.begin(), st.tables->opens.end(),
                           [&](const auto& entry) { return entry.second->persistent_id == file_id; });
    if (it == st.tables->opens.end()) continue;
    state::Open& open = *it->second;
    std::string path = open.path;
    const state::Session* session = st.find_session(open.session_id);
    LogClientScope about(st.client_address, session ? std::string_view(session->user) : std::string_view());
    // As a CLOSE does: a pending write time is set before the handle goes.
    smb2::write_time_at_close(open);
    smb2::close_open(st, ctx_, it->first);
    LOG_INFO("%s: open 0x%llx of '%s' closed by the administrator", st.client_address.c_str(),
             static_cast<unsigned long long>(file_id), path.empty() ? "." : path.c_str());
    return true;
  }
  return false;
}

size_t Worker::close_share(const std::string& share) {
  size_t closed = 0;
  for (auto& [id, c] : conns_) {
    if (c->closing) continue;
    smb2::ConnState& st = c->state;
    for (auto& [sid, s] : st.tables->sessions) {
      std::vector<uint32_t> trees;
      // Share names compare ASCII-folded, as the configuration's do.
      for (const auto& [tid, t] : s->trees)
        if (strcasecmp(t->share.name.c_str(), share.c_str()) == 0) trees.push_back(tid);
      if (trees.empty()) continue;
      LogClientScope about(st.client_address, s->user, share);
      for (uint32_t tid : trees) smb2::disconnect_tree(st, ctx_, *s, tid);
      LOG_INFO("%s: %zu tree connect(s) of '%s' to share '%s' closed by the administrator",
               st.client_address.c_str(), trees.size(), s->user.c_str(), share.c_str());
      closed += trees.size();
    }
  }
  return closed;
}

}  // namespace ringsmb::transport
