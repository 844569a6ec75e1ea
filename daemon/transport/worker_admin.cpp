// The admin side of a worker: status snapshots and closing a session, run
// on the worker's own thread through Worker::post (admin_endpoint.cpp), so
// they see the connections between two requests, never in the middle of one.
#include <sys/socket.h>

#include "common/log.hpp"
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

}  // namespace

void Worker::collect_status(ipc::ServerStatus& out) const {
  for (const auto& [id, c] : conns_) {
    if (c->closing) continue;
    const smb2::ConnState& st = c->state;
    // Connection ids are per worker; the worker index makes them unique.
    uint64_t conn_id = (uint64_t(index_) << 48) | id;
    out.connections.push_back({conn_id, st.client_address, st.dialect});
    for (const auto& [sid, s] : st.sessions) {
      if (s->state != state::Session::State::Valid) continue;
      out.sessions.push_back({sid, conn_id, s->user, st.client_address, st.dialect, session_flags(*s)});
      for (const auto& [tid, t] : s->trees) out.trees.push_back({sid, tid, t->share.name, s->user, st.client_address});
    }
    for (const auto& [vid, o] : st.opens) {
      const state::Session* s = nullptr;
      if (auto it = st.sessions.find(o->session_id); it != st.sessions.end()) s = it->second.get();
      std::string share;
      if (s)
        if (auto t = s->trees.find(o->tree_id); t != s->trees.end()) share = t->second->share.name;
      out.open_files.push_back({o->session_id, o->tree_id, share, o->path, s ? s->user : std::string(),
                                st.client_address});
    }
  }
}

bool Worker::close_session(uint64_t session_id) {
  for (auto& [id, c] : conns_) {
    smb2::ConnState& st = c->state;
    auto it = st.sessions.find(session_id);
    if (it == st.sessions.end() || c->closing) continue;
    std::vector<uint64_t> to_close;
    for (const auto& [vid, o] : st.opens)
      if (o->session_id == session_id) to_close.push_back(vid);
    for (uint64_t vid : to_close) smb2::close_open(st, ctx_, vid);
    std::string user = it->second->user;
    if (it->second->state == state::Session::State::Valid && ctx_.control) ctx_.control->logout(user);
    st.sessions.erase(it);
    ctx_.sessions.remove(session_id);
    LOG_INFO("%s: session 0x%llx of '%s' closed by the administrator", st.client_address.c_str(),
             static_cast<unsigned long long>(session_id), user.c_str());
    // A client keeps using a connection whose session vanished and gets
    // USER_SESSION_DELETED for every request; without other sessions the
    // connection is of no use, and dropping it makes the client notice.
    if (st.sessions.empty()) drop(*c, "session closed by the administrator");
    return true;
  }
  return false;
}

}  // namespace ringsmb::transport
