// ipc::ControlPlane over netlink: every question goes to ringsmb-ctld and
// the calling worker thread waits for the answer. Each calling thread has
// its own netlink socket (thread_local), so replies need no demultiplexing
// between threads; within a thread, the handle (nlmsg_seq) discards a late
// reply to a request that already timed out. When ctld is down or silent,
// logins fail with LOGON_FAILURE and tree connects with an error status;
// sessions that exist keep working because they never ask ctld again.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>

#include "common/log.hpp"
#include "ipc/control_plane.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/ctld_supervisor.hpp"
#include "ipc/nl_socket.hpp"

namespace ringsmb::ipc {
namespace {

using namespace abi;

class NetlinkControlPlane final : public ControlPlane {
 public:
  NetlinkControlPlane(const config::Config& cfg, const NetlinkOptions& opts)
      : workgroup_(cfg.global.workgroup),
        netbios_name_(cfg.global.netbios_name),
        supervisor_(link_, opts, cfg.global.state_directory) {}

  bool start(int ready_timeout_ms);
  LoginReply login(const LoginRequest& req) override;
  TreeConnectReply tree_connect(const TreeConnectRequest& req) override;
  void tree_disconnect(const std::string& share, const std::string& user) override;
  void logout(const std::string& user) override;
  void reload() override { supervisor_.reload(); }
  std::string workgroup() const override { return workgroup_; }
  std::string netbios_name() const override { return netbios_name_; }

 private:
  // Sends B (made with handle SEQ) and waits for its reply. The Message
  // points into this thread's socket buffer: decode it before the next call.
  std::optional<Message> transact(const MsgBuilder& b, Cmd cmd, uint32_t seq);
  void send_one_way(const MsgBuilder& b);
  NlSocket* thread_socket();
  uint32_t next_seq() { return seq_.fetch_add(1) | 0x80000000u; }  // apart from the supervisor's

  std::string workgroup_;
  std::string netbios_name_;
  CtldLink link_;
  std::atomic<uint32_t> seq_{1};
  CtldSupervisor supervisor_;
};

bool NetlinkControlPlane::start(int ready_timeout_ms) {
  std::string error;
  if (!supervisor_.start(error)) {
    LOG_ERROR("control plane: %s", error.c_str());
    return false;
  }
  if (!supervisor_.wait_ready(ready_timeout_ms))
    LOG_WARN("control plane: ringsmb-ctld is not answering yet; logins fail until it does");
  return true;
}

NlSocket* NetlinkControlPlane::thread_socket() {
  // One socket per worker thread, for the life of the thread.
  thread_local std::unique_ptr<NlSocket> sock;
  if (!sock) {
    auto s = NlSocket::open(0);
    if (!s) {
      LOG_ERROR("control plane: %s", s.error().c_str());
      return nullptr;
    }
    sock = std::make_unique<NlSocket>(std::move(*s));
  }
  return sock.get();
}

std::optional<Message> NetlinkControlPlane::transact(const MsgBuilder& b, Cmd cmd, uint32_t seq) {
  uint32_t port = link_.port.load();
  NlSocket* sock = thread_socket();
  if (port == 0 || !sock || !b.ok()) return std::nullopt;
  if (int err = sock->send(port, b.wire())) {
    LOG_WARN("control plane: %s to ringsmb-ctld: %s", cmd_name(cmd), strerror(err));
    if (err == ECONNREFUSED) link_.lost(port);
    return std::nullopt;
  }
  for (;;) {
    Datagram d;
    if (!sock->receive(d, kRequestTimeoutMs)) {
      LOG_WARN("control plane: no answer to %s from ringsmb-ctld within %d ms", cmd_name(cmd), kRequestTimeoutMs);
      return std::nullopt;
    }
    if (d.port != port) continue;  // only ctld may answer
    auto m = parse_message(sock->buffer(), d.size);
    if (!m) {
      LOG_WARN("control plane: bad reply from ringsmb-ctld: %s", to_string(m.error()));
      continue;
    }
    if (!m->is_request && m->seq == seq && m->cmd == cmd) return *m;
    // A late answer to a request that timed out before: drop it.
  }
}

void NetlinkControlPlane::send_one_way(const MsgBuilder& b) {
  uint32_t port = link_.port.load();
  NlSocket* sock = thread_socket();
  if (port && sock && b.ok()) sock->send(port, b.wire());
}

LoginReply NetlinkControlPlane::login(const LoginRequest& req) {
  uint32_t seq = next_seq();
  MsgBuilder b(CMD_LOGIN_EXT, seq, true);
  encode_login_request(b, req);
  auto m = transact(b, CMD_LOGIN_EXT, seq);
  if (!m) {
    LoginReply failed;
    failed.status = NtStatus::LogonFailure;
    return failed;
  }
  return decode_login_reply(*m);
}

TreeConnectReply NetlinkControlPlane::tree_connect(const TreeConnectRequest& req) {
  uint32_t seq = next_seq();
  MsgBuilder b(CMD_TREE_CONNECT, seq, true);
  encode_tree_connect_request(b, req);
  auto m = transact(b, CMD_TREE_CONNECT, seq);
  if (!m) {
    // Not BAD_NETWORK_NAME: the share may well exist; the server cannot decide now.
    TreeConnectReply failed;
    failed.status = NtStatus::RequestNotAccepted;
    return failed;
  }
  return decode_tree_connect_reply(*m);
}

void NetlinkControlPlane::tree_disconnect(const std::string& share, const std::string& user) {
  MsgBuilder b(CMD_TREE_DISCONNECT, next_seq(), true);
  b.str(ATTR_SHARE_NAME, share).str(ATTR_ACCOUNT, user);
  send_one_way(b);
}

void NetlinkControlPlane::logout(const std::string& user) {
  MsgBuilder b(CMD_LOGOUT, next_seq(), true);
  b.str(ATTR_ACCOUNT, user);
  send_one_way(b);
}

}  // namespace

std::unique_ptr<ControlPlane> make_netlink_control_plane(const config::Config& cfg, const NetlinkOptions& opts) {
  auto cp = std::make_unique<NetlinkControlPlane>(cfg, opts);
  if (!cp->start(opts.ready_timeout_ms)) return nullptr;
  return cp;
}

}  // namespace ringsmb::ipc
