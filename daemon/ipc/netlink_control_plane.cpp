// ipc::ControlPlane over netlink: every question goes to ringsmb-ctld and
// the calling worker thread waits for the answer. Each calling thread has
// its own netlink socket (thread_local) and its own request channel at ctld
// (opened with STARTING_UP, ctl_abi.hpp TRANSPORT; both ends connect()ed to
// each other, so no other local process can send into it), so replies need
// no demultiplexing between threads; within a thread, the handle
// (nlmsg_seq) discards a late reply to a request that already timed out. When ctld is down or silent,
// logins fail with LOGON_FAILURE and tree connects with an error status;
// sessions that exist keep working because they never ask ctld again.
// IPC$ pipes live in ctld (RPC_* messages); their bytes cross in pieces of
// at most kMaxRpcData, and a pipe whose ctld restarted answers
// INVALID_HANDLE.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>

#include "common/log.hpp"
#include "ipc/netlink_control_plane.hpp"
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
  KerberosLoginReply kerberos_login(const KerberosLoginRequest& req) override;
  TreeConnectReply tree_connect(const TreeConnectRequest& req) override;
  void tree_disconnect(const std::string& share, const std::string& user) override;
  void logout(const std::string& user) override;
  void reload() override { supervisor_.reload(); }
  std::string workgroup() const override { return workgroup_; }
  std::string netbios_name() const override { return netbios_name_; }
  PipeReply pipe_open(const PipeOpenRequest& req) override;
  PipeReply pipe_write(uint32_t handle, ByteSpan data) override;
  PipeReply pipe_read(uint32_t handle, uint32_t max) override;
  PipeReply pipe_transceive(uint32_t handle, ByteSpan in, uint32_t max) override;
  void pipe_close(uint32_t handle) override;

 private:
  // The shape of every call that waits for its answer: FILL writes the
  // request's attributes, DECODE reads the reply; UNANSWERED is the result
  // when the request cannot be sent or ringsmb-ctld does not answer.
  template <class Reply, class Fill>
  Reply request(Cmd cmd, const Fill& fill, Reply (*decode)(const Message&), Reply unanswered) {
    uint32_t seq = next_seq();
    MsgBuilder b(cmd, seq, true);
    fill(b);
    auto m = transact(b, cmd, seq);
    return m ? decode(*m) : unanswered;
  }
  // One RPC_* request and its reply; DATA and MAX are sent when given.
  PipeReply rpc_call(Cmd cmd, uint32_t handle, const ByteSpan* data, std::optional<uint32_t> max);
  // Sends B (made with handle SEQ) and waits for its reply. The Message
  // points into this thread's socket buffer: decode it before the next call.
  std::optional<Message> transact(const MsgBuilder& b, Cmd cmd, uint32_t seq);
  void send_one_way(const MsgBuilder& b);
  struct ThreadChannel {
    NlSocket sock;
    uint32_t request_port = 0;  // the ctld the channel was opened at
    uint32_t channel = 0;       // our channel's port there; 0: not open
  };
  ThreadChannel* thread_channel();
  // Opens (or re-opens) CH at the ctld on REQUEST_PORT; false on failure.
  bool open_channel(ThreadChannel& ch, uint32_t request_port);
  // Sends B on this thread's channel, opening it first when needed, and
  // re-opening once when ctld no longer knows it. 0 or an errno.
  int send_on_channel(ThreadChannel& ch, const MsgBuilder& b, Cmd cmd);
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

NetlinkControlPlane::ThreadChannel* NetlinkControlPlane::thread_channel() {
  // One socket per worker thread, for the life of the thread.
  thread_local std::unique_ptr<ThreadChannel> ch;
  if (!ch) {
    auto s = NlSocket::open(0);
    if (!s) {
      LOG_ERROR("control plane: %s", s.error().c_str());
      return nullptr;
    }
    ch = std::make_unique<ThreadChannel>();
    ch->sock = std::move(*s);
  }
  return ch.get();
}

bool NetlinkControlPlane::open_channel(ThreadChannel& ch, uint32_t request_port) {
  ch.channel = 0;
  uint32_t seq = next_seq();
  MsgBuilder b(CMD_STARTING_UP, seq, true);
  b.u32(ATTR_ABI_VERSION, kAbiVersion).u32(ATTR_PID, uint32_t(getpid())).u32(ATTR_ROLE, ROLE_CHANNEL);
  // Connected to the request port while we wait: only ctld can answer.
  int err = ch.sock.connect_to(request_port);
  if (err == 0) err = ch.sock.send(request_port, b.wire());
  if (err) {
    LOG_WARN("control plane: opening a channel at ringsmb-ctld: %s", strerror(err));
    if (err == ECONNREFUSED) link_.lost(request_port);
    return false;
  }
  Datagram d;
  while (ch.sock.receive(d, kRequestTimeoutMs)) {
    auto m = parse_message(ch.sock.buffer(), d.size);
    if (!m || m->is_request || m->seq != seq || m->cmd != CMD_STARTING_UP) continue;
    uint32_t channel = m->u32(ATTR_CHANNEL_PORT);
    if (NtStatus(m->u32(ATTR_STATUS)) != NtStatus::Success || channel == 0 || ch.sock.connect_to(channel) != 0) {
      LOG_WARN("control plane: ringsmb-ctld refused a request channel (status 0x%08x)", m->u32(ATTR_STATUS));
      return false;
    }
    ch.request_port = request_port;
    ch.channel = channel;
    return true;
  }
  LOG_WARN("control plane: ringsmb-ctld did not open a channel within %d ms", kRequestTimeoutMs);
  return false;
}

int NetlinkControlPlane::send_on_channel(ThreadChannel& ch, const MsgBuilder& b, Cmd cmd) {
  uint32_t port = link_.port.load();
  if (port == 0) return ENOTCONN;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if ((ch.channel == 0 || ch.request_port != port) && !open_channel(ch, port)) return ENOTCONN;
    int err = ch.sock.send(ch.channel, b.wire());
    if (err != ECONNREFUSED) {
      if (err) LOG_WARN("control plane: %s to ringsmb-ctld: %s", cmd_name(cmd), strerror(err));
      return err;
    }
    ch.channel = 0;  // ctld dropped the channel (or restarted): open a new one once
  }
  return ECONNREFUSED;
}

std::optional<Message> NetlinkControlPlane::transact(const MsgBuilder& b, Cmd cmd, uint32_t seq) {
  ThreadChannel* ch = thread_channel();
  if (!ch || !b.ok() || send_on_channel(*ch, b, cmd) != 0) return std::nullopt;
  NlSocket& sock = ch->sock;
  for (;;) {
    Datagram d;
    if (!sock.receive(d, kRequestTimeoutMs)) {
      LOG_WARN("control plane: no answer to %s from ringsmb-ctld within %d ms", cmd_name(cmd), kRequestTimeoutMs);
      return std::nullopt;
    }
    if (d.port != ch->channel) continue;  // only our channel may answer
    auto m = parse_message(sock.buffer(), d.size);
    if (!m) {
      LOG_WARN("control plane: bad reply from ringsmb-ctld: %s", to_string(m.error()));
      continue;
    }
    if (!m->is_request && m->seq == seq && m->cmd == cmd) return *m;
    // A late answer to a request that timed out before: drop it.
  }
}

void NetlinkControlPlane::send_one_way(const MsgBuilder& b) {
  ThreadChannel* ch = thread_channel();
  if (ch && b.ok()) send_on_channel(*ch, b, Cmd(0));
}

// The reply to an RPC_* request.
PipeReply decode_pipe_reply(const Message& m) {
  PipeReply reply;
  reply.status = NtStatus(m.u32(ATTR_STATUS));
  if (m.has(ATTR_RPC_DATA)) {
    ByteSpan d = m.bytes(ATTR_RPC_DATA);
    reply.data.assign(d.begin(), d.end());
  }
  reply.more = m.u32(ATTR_RPC_MORE) != 0;
  return reply;
}

LoginReply NetlinkControlPlane::login(const LoginRequest& req) {
  LoginReply unanswered;
  unanswered.status = NtStatus::LogonFailure;
  return request(CMD_LOGIN_EXT, [&](MsgBuilder& b) { encode_login_request(b, req); }, decode_login_reply,
                 unanswered);
}

KerberosLoginReply NetlinkControlPlane::kerberos_login(const KerberosLoginRequest& req) {
  KerberosLoginReply unanswered;
  unanswered.login.status = NtStatus::LogonFailure;
  return request(CMD_SPNEGO_AUTHEN, [&](MsgBuilder& b) { encode_kerberos_login_request(b, req); },
                 decode_kerberos_login_reply, unanswered);
}

TreeConnectReply NetlinkControlPlane::tree_connect(const TreeConnectRequest& req) {
  // Not BAD_NETWORK_NAME: the share may well exist; the server cannot decide now.
  TreeConnectReply unanswered;
  unanswered.status = NtStatus::RequestNotAccepted;
  return request(CMD_TREE_CONNECT, [&](MsgBuilder& b) { encode_tree_connect_request(b, req); },
                 decode_tree_connect_reply, unanswered);
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

PipeReply NetlinkControlPlane::rpc_call(Cmd cmd, uint32_t handle, const ByteSpan* data,
                                        std::optional<uint32_t> max) {
  auto fill = [&](MsgBuilder& b) {
    b.u32(ATTR_RPC_HANDLE, handle);
    if (data) b.bytes(ATTR_RPC_DATA, *data);
    if (max) b.u32(ATTR_RPC_MAX, std::min<uint32_t>(*max, kMaxRpcData));
  };
  return request(cmd, fill, decode_pipe_reply, PipeReply{});  // unanswered: PipeNotAvailable
}

PipeReply NetlinkControlPlane::pipe_open(const PipeOpenRequest& req) {
  bool fits = true;
  auto fill = [&](MsgBuilder& b) {
    b.u32(ATTR_RPC_HANDLE, req.handle).str(ATTR_RPC_PIPE, req.pipe).str(ATTR_ACCOUNT, req.user);
    b.u32(ATTR_LOGIN_FLAGS, req.is_guest ? LOGIN_GUEST : 0);
    fits = b.ok();
  };
  PipeReply reply = request(CMD_RPC_OPEN, fill, decode_pipe_reply, PipeReply{});
  // A name too long for the policy cannot be a pipe we serve.
  if (!fits) reply.status = NtStatus::ObjectNameNotFound;
  return reply;
}

PipeReply NetlinkControlPlane::pipe_write(uint32_t handle, ByteSpan data) {
  PipeReply reply;
  reply.status = NtStatus::Success;
  do {  // an empty write still reaches ctld (and checks the handle)
    ByteSpan piece = data.first(std::min(data.size(), kMaxRpcData));
    reply = rpc_call(CMD_RPC_WRITE, handle, &piece, std::nullopt);
    data = data.subspan(piece.size());
  } while (reply.status == NtStatus::Success && !data.empty());
  return reply;
}

PipeReply NetlinkControlPlane::pipe_read(uint32_t handle, uint32_t max) {
  return rpc_call(CMD_RPC_READ, handle, nullptr, max);
}

PipeReply NetlinkControlPlane::pipe_transceive(uint32_t handle, ByteSpan in, uint32_t max) {
  // All but the last piece go as plain writes; the last one is the transact.
  if (in.size() > kMaxRpcData) {
    size_t head = in.size() - kMaxRpcData;
    PipeReply w = pipe_write(handle, in.first(head));
    if (w.status != NtStatus::Success) return w;
    in = in.subspan(head);
  }
  return rpc_call(CMD_RPC_IOCTL, handle, &in, max);
}

void NetlinkControlPlane::pipe_close(uint32_t handle) {
  // Waits for the reply so that a handle is never reused while ctld still
  // holds it; a lost reply leaves at most a pipe that the next reuse replaces.
  rpc_call(CMD_RPC_CLOSE, handle, nullptr, std::nullopt);
}

}  // namespace

std::unique_ptr<ControlPlane> make_netlink_control_plane(const config::Config& cfg, const NetlinkOptions& opts) {
  auto cp = std::make_unique<NetlinkControlPlane>(cfg, opts);
  if (!cp->start(opts.ready_timeout_ms)) return nullptr;
  return cp;
}

}  // namespace ringsmb::ipc
