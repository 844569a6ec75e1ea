// RPC_* requests: DCE/RPC on IPC$ pipes runs here in the control plane,
// next to the configuration and the user database (daemon/rpc). ringsmbd
// only relays the bytes of the client's WRITE, READ and TRANSCEIVE. The
// pipe table is bounded, and dropped whole when a different data plane
// registers or the registered one shuts down: ringsmbd's handles die with it.
#include <algorithm>

#include "common/log.hpp"
#include "ringsmb-ctld/ctl_server.hpp"

namespace ringsmb::ctld {

using namespace ipc;
using namespace ipc::abi;

namespace {

Bytes data_reply(const Message& m, NtStatus status, const Bytes& data, bool more) {
  MsgBuilder b(Cmd(m.cmd), m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(status)).bytes(ATTR_RPC_DATA, data).u32(ATTR_RPC_MORE, more ? 1 : 0);
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

}  // namespace

Bytes CtlServer::on_rpc_open(const Message& m) {
  ipc::PipeOpenRequest req;
  req.handle = m.u32(ATTR_RPC_HANDLE);
  req.pipe = m.str(ATTR_RPC_PIPE);
  req.user = m.str(ATTR_ACCOUNT);
  req.is_guest = m.u32(ATTR_LOGIN_FLAGS) & LOGIN_GUEST;
  // Not owned: cfg_ is a member, so the pipe reads the current
  // configuration across reloads and the table never outlives it.
  std::shared_ptr<const config::Config> config(std::shared_ptr<const void>(), &cfg_);
  std::string home = policy_->home_share_of(req.user, req.is_guest);
  return status_reply(m, pipes_.open(req, std::move(config), home).status);
}

Bytes CtlServer::on_rpc(const Message& m) {
  if (m.cmd == CMD_RPC_OPEN) return on_rpc_open(m);
  uint32_t handle = m.u32(ATTR_RPC_HANDLE);
  uint32_t max = uint32_t(std::min<size_t>(m.u32(ATTR_RPC_MAX), kMaxRpcData));
  ipc::PipeReply r;
  switch (m.cmd) {
    case CMD_RPC_WRITE: return status_reply(m, pipes_.write(handle, m.bytes(ATTR_RPC_DATA)).status);
    case CMD_RPC_READ: r = pipes_.read(handle, max); break;
    case CMD_RPC_IOCTL: r = pipes_.transceive(handle, m.bytes(ATTR_RPC_DATA), max); break;
    default:  // CMD_RPC_CLOSE
      return status_reply(m, pipes_.close(handle) ? NtStatus::Success : NtStatus::InvalidHandle);
  }
  if (r.status != NtStatus::Success) return status_reply(m, r.status);
  return data_reply(m, r.status, r.data, r.more);
}

void CtlServer::drop_pipes(const char* why) {
  size_t dropped = pipes_.clear();
  if (dropped) LOG_INFO("ctl: closed %zu pipes (%s)", dropped, why);
}

}  // namespace ringsmb::ctld
