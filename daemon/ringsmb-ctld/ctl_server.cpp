#include "ringsmb-ctld/ctl_server.hpp"

#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "common/log.hpp"
#include "control/domain_directory.hpp"
#include "control/local_control_plane.hpp"
#include "ipc/ctl_debug.hpp"

namespace ringsmb::ctld {

using namespace ipc;
using namespace ipc::abi;

namespace {

Bytes to_bytes(const MsgBuilder& b) {
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

}  // namespace

CtlServer::CtlServer(std::string config_path, config::Config cfg)
    : config_path_(std::move(config_path)), cfg_(std::move(cfg)), policy_(control::make_local_control_plane(cfg_)) {
  control::configure_domain_directory(cfg_);
}

CtlServer::~CtlServer() = default;

std::expected<std::string, std::string> CtlServer::reload() {
  auto parsed = config::parse_config_file(config_path_);
  if (!parsed) {
    log_lines(LogLevel::Error, "reload: ", parsed.error());
    LOG_ERROR("reload: keeping the previous configuration");
    return std::unexpected(parsed.error());
  }
  std::string warnings;
  for (const auto& w : parsed->warnings) {
    LOG_WARN("reload: %s", w.c_str());
    warnings += (warnings.empty() ? "" : "\n") + w;
  }
  cfg_ = std::move(parsed->config);
  apply_configured_log_level(cfg_.global.log_level);
  // A fresh policy engine re-reads the user database on its first login.
  policy_ = control::make_local_control_plane(cfg_);
  control::configure_domain_directory(cfg_);
  LOG_INFO("reloaded %s: %zu shares", config_path_.c_str(), cfg_.shares.size());
  if (reloaded_) reloaded_(cfg_);
  return warnings;
}

std::vector<Outgoing> CtlServer::handle(const uint8_t* data, size_t len, uint32_t from_port) {
  auto parsed = parse_message(data, len);
  if (!parsed) {
    LOG_WARN("ctl: rejected message from port %u: %s", from_port, to_string(parsed.error()));
    return {};
  }
  if (!parsed->is_request) {
    LOG_DEBUG("ctl: ignoring a %s reply from port %u", cmd_name(parsed->cmd), from_port);
    return {};
  }
  LOG_DEBUG("ctl: %s from port %u (handle %u)", cmd_name(parsed->cmd), from_port, parsed->seq);
  return dispatch(*parsed, from_port);
}

std::vector<Outgoing> CtlServer::dispatch(const Message& m, uint32_t from_port) {
  // A request about a client (a login, a tree connect): what it logs is
  // about that client, user and share (the journal's SMB_* fields).
  std::optional<LogClientScope> about;
  if (m.has(ATTR_CLIENT_ADDRESS))
    about.emplace(m.str(ATTR_CLIENT_ADDRESS), m.str(ATTR_ACCOUNT), m.str(ATTR_SHARE_NAME));
  auto reply = [&](Bytes b) { return std::vector<Outgoing>{{from_port, std::move(b)}}; };
  switch (Cmd(m.cmd)) {
    case CMD_HEARTBEAT: return reply(status_reply(m, NtStatus::Success));
    case CMD_STARTING_UP: return reply(on_starting_up(m, from_port));
    case CMD_SHUTTING_DOWN:
      if (from_port == data_plane_port_) {
        LOG_INFO("ctl: the data plane (pid %u) is shutting down", m.u32(ATTR_PID));
        data_plane_port_ = 0;
        drop_pipes("the data plane shut down");
      }
      return {};
    case CMD_LOGIN:
    case CMD_LOGIN_EXT: return reply(on_login(m));
    case CMD_SHARE_CONFIG: return reply(on_share_config(m));
    case CMD_TREE_CONNECT: return reply(on_tree_connect(m));
    case CMD_TREE_DISCONNECT: policy_->tree_disconnect(m.str(ATTR_SHARE_NAME), m.str(ATTR_ACCOUNT)); return {};
    case CMD_LOGOUT: policy_->logout(m.str(ATTR_ACCOUNT)); return {};
    case CMD_RPC_OPEN:
    case CMD_RPC_READ:
    case CMD_RPC_WRITE:
    case CMD_RPC_IOCTL:
    case CMD_RPC_CLOSE: return reply(on_rpc(m));
    case CMD_RELOAD: return reply(on_reload(m));
    case CMD_SHUTDOWN: return on_shutdown(m, from_port);
    case CMD_DEBUG: return reply(ipc::answer_debug(m, from_port));
    case CMD_LIST_CONNECTIONS:
    case CMD_LIST_SESSIONS:
    case CMD_LIST_TREE_CONNECTS:
    case CMD_LIST_OPEN_FILES:
    case CMD_CLOSE_SESSION:
    case CMD_CLOSE_FILE:
    case CMD_CLOSE_SHARE:
    case CMD_GET_METRICS:
      // ringsmbd holds sessions and open files and answers these itself.
      return reply(status_reply(m, NtStatus::NotSupported, "ask ringsmbd (its port file ringsmbd.port)"));
    case CMD_SPNEGO_AUTHEN: return reply(on_kerberos_login(m));
    default: return reply(status_reply(m, NtStatus::NotSupported, "not implemented yet"));
  }
}

Bytes CtlServer::status_reply(const Message& m, NtStatus status, const std::string& text) {
  MsgBuilder b(Cmd(m.cmd), m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(status));
  if (!text.empty()) b.str(ATTR_TEXT, text);
  return to_bytes(b);
}

Bytes CtlServer::on_starting_up(const Message& m, uint32_t from_port) {
  uint32_t version = m.u32(ATTR_ABI_VERSION);
  MsgBuilder b(CMD_STARTING_UP, m.seq, false);
  bool ok = version == kAbiVersion;
  b.u32(ATTR_STATUS, uint32_t(ok ? NtStatus::Success : NtStatus::NotSupported))
      .u32(ATTR_ABI_VERSION, kAbiVersion)
      .u32(ATTR_PID, uint32_t(getpid()));
  if (!ok) {
    LOG_ERROR("ctl: pid %u speaks ABI version %u, we speak %u: refused", m.u32(ATTR_PID), version, kAbiVersion);
    return to_bytes(b);
  }
  if (via_request_port_) {
    uint32_t channel = channels_.open(from_port, peer_pid_);
    if (channel == 0) return status_reply(m, NtStatus::InsufficientResources);
    b.u32(ATTR_CHANNEL_PORT, channel);
  }
  if (m.u32(ATTR_ROLE) == ROLE_DATA_PLANE) {
    // The same ringsmbd registers again after a lost link; its pipes stay.
    if (m.u32(ATTR_PID) != data_plane_pid_) {
      drop_pipes("a new data plane registered");
      channels_.prune_dead();
    }
    data_plane_pid_ = m.u32(ATTR_PID);
    data_plane_port_ = from_port;
    LOG_INFO("ctl: data plane pid %u registered (port %u)", m.u32(ATTR_PID), from_port);
  }
  return to_bytes(b);
}

Bytes CtlServer::on_login(const Message& m) {
  LoginReply r = policy_->login(decode_login_request(m));
  MsgBuilder b(Cmd(m.cmd), m.seq, false);
  encode_login_reply(b, r, m.cmd == CMD_LOGIN_EXT);
  if (!b.ok()) return status_reply(m, NtStatus::InsufficientResources);
  return to_bytes(b);
}

Bytes CtlServer::on_kerberos_login(const Message& m) {
  KerberosLoginReply r = policy_->kerberos_login(decode_kerberos_login_request(m));
  MsgBuilder b(CMD_SPNEGO_AUTHEN, m.seq, false);
  encode_kerberos_login_reply(b, r);
  if (!b.ok()) return status_reply(m, NtStatus::InsufficientResources);
  return to_bytes(b);
}

Bytes CtlServer::on_tree_connect(const Message& m) {
  TreeConnectReply r = policy_->tree_connect(decode_tree_connect_request(m));
  MsgBuilder b(CMD_TREE_CONNECT, m.seq, false);
  encode_tree_connect_reply(b, r);
  if (!b.ok()) return status_reply(m, NtStatus::InsufficientResources);
  return to_bytes(b);
}

Bytes CtlServer::on_share_config(const Message& m) {
  auto info = control::share_info(cfg_, m.str(ATTR_SHARE_NAME));
  if (!info) return status_reply(m, NtStatus::BadNetworkName);
  const config::ShareConfig* sc = cfg_.find_share(info->name);
  MsgBuilder b(CMD_SHARE_CONFIG, m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(NtStatus::Success));
  encode_share(b, *info, sc && sc->guest_ok ? SHARE_GUEST_OK : 0);
  return to_bytes(b);
}

Bytes CtlServer::on_reload(const Message& m) {
  LOG_INFO("RELOAD requested by ringsmbctl");
  auto r = reload();
  // Success with TEXT: the file's warnings, which ringsmbctl shows.
  return r ? status_reply(m, NtStatus::Success, fit_text_attr(*r))
           : status_reply(m, NtStatus::Unsuccessful, fit_text_attr(r.error()));
}

std::vector<Outgoing> CtlServer::on_shutdown(const Message& m, uint32_t from_port) {
  std::vector<Outgoing> out;
  if (data_plane_port_ != 0) {
    // The data plane stops itself on this notice; it does not answer.
    MsgBuilder notice(CMD_SHUTDOWN, events_seq_++, true);
    out.push_back({data_plane_port_, to_bytes(notice)});
  }
  out.push_back({from_port, status_reply(m, NtStatus::Success)});
  LOG_INFO("ctl: SHUTDOWN requested (port %u)", from_port);
  shutdown_ = true;
  return out;
}

void CtlServer::serve(NlSocket& requests, int extra_fd, const std::function<void()>& on_extra) {
  while (!shutdown_) {
    std::vector<pollfd> p = {{requests.fd(), POLLIN, 0}, {extra_fd, POLLIN, 0}};
    for (const auto& s : sources_) p.push_back({s.fd, POLLIN, 0});
    const size_t first_channel = p.size();
    for (size_t i = 0; i < channels_.size(); ++i) p.push_back({channels_.at(i).fd(), POLLIN, 0});
    if (poll(p.data(), p.size(), -1) < 0) continue;  // EINTR; a negative extra_fd is skipped by poll
    if (p[1].revents & POLLIN) on_extra();
    for (size_t i = 0; i < sources_.size(); ++i)
      if (p[2 + i].revents) sources_[i].on_ready();
    // Channels first, each a bounded batch: a flood of the request port
    // (anyone may send there) never queues a login behind it.
    std::vector<uint32_t> ready;
    for (size_t i = first_channel; i < p.size(); ++i)
      if (p[i].revents) ready.push_back(channels_.at(i - first_channel).peer());
    for (uint32_t peer : ready)
      if (ipc::NlSocket* s = channels_.find(peer)) drain(*s, false, 64);
    if (p[0].revents & POLLIN) drain(requests, true, 256);
  }
}

bool CtlServer::drain(ipc::NlSocket& sock, bool is_request_port, int budget) {
  Datagram d;
  while (budget-- > 0 && !shutdown_ && sock.receive(d, 0)) {
    peer_pid_ = d.cred.pid;
    via_request_port_ = is_request_port;
    auto out = handle(sock.buffer(), d.size, d.port);
    via_request_port_ = true;
    for (auto& o : out)
      if (!send_outgoing(sock, d.port, o) && !is_request_port && o.port == d.port) return false;
  }
  return true;
}

bool CtlServer::send_outgoing(ipc::NlSocket& arrival, uint32_t from_port, const Outgoing& o) {
  bool on_channel = o.port != from_port;
  ipc::NlSocket* via = on_channel ? channels_.find(o.port) : &arrival;
  if (!via) {
    LOG_WARN("ctl: no channel to port %u; %zu bytes not sent", o.port, o.bytes.size());
    return true;
  }
  on_channel = on_channel || via->peer() == o.port;
  int err = via->send(o.port, o.bytes);
  if (err == 0) return true;
  LOG_WARN("ctl: reply to port %u: %s", o.port, strerror(err));
  if (err == ECONNREFUSED && on_channel) {
    channels_.close(o.port);  // its peer is gone; it opens a new one when it comes back
    return false;
  }
  return true;
}

void CtlServer::announce_shutdown() {
  if (!data_plane_port_) return;
  MsgBuilder b(CMD_SHUTTING_DOWN, events_seq_++, true);
  b.u32(ATTR_PID, uint32_t(getpid()));
  if (ipc::NlSocket* s = channels_.find(data_plane_port_)) s->send(data_plane_port_, b.wire());
}

}  // namespace ringsmb::ctld
