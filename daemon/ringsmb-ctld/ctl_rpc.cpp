// RPC_* requests: DCE/RPC on IPC$ pipes runs here in the control plane,
// next to the configuration and the user database (daemon/rpc). ringsmbd
// only relays the bytes of the client's WRITE, READ and TRANSCEIVE. The
// pipe table is bounded, and dropped whole when a different data plane
// registers or the registered one shuts down: ringsmbd's handles die with it.
#include <algorithm>

#include "common/log.hpp"
#include "ringsmb-ctld/ctl_server.hpp"

namespace ringsmb::ipc {

using namespace abi;

namespace {

Bytes data_reply(const Message& m, NtStatus status, const Bytes& data, bool more) {
  MsgBuilder b(Cmd(m.cmd), m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(status)).bytes(ATTR_RPC_DATA, data).u32(ATTR_RPC_MORE, more ? 1 : 0);
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

}  // namespace

Bytes CtlServer::on_rpc_open(const Message& m) {
  uint32_t handle = m.u32(ATTR_RPC_HANDLE);
  rpc::RpcContext ctx;
  ctx.config = &cfg_;  // a member: stays valid (and current) across reloads
  ctx.user = m.str(ATTR_ACCOUNT);
  ctx.is_guest = m.u32(ATTR_LOGIN_FLAGS) & LOGIN_GUEST;
  auto pipe = rpc::RpcPipe::open(m.str(ATTR_RPC_PIPE), ctx);
  if (!pipe) return status_reply(m, NtStatus::ObjectNameNotFound);
  if (pipes_.size() >= kMaxOpenPipes && !pipes_.count(handle)) {
    LOG_WARN("ctl: %zu pipes open, refusing another", pipes_.size());
    return status_reply(m, NtStatus::InsufficientResources);
  }
  pipes_[handle] = std::move(pipe);  // a reused handle replaces a pipe ringsmbd forgot to close
  return status_reply(m, NtStatus::Success);
}

Bytes CtlServer::on_rpc(const Message& m) {
  if (m.cmd == CMD_RPC_OPEN) return on_rpc_open(m);
  auto it = pipes_.find(m.u32(ATTR_RPC_HANDLE));
  if (it == pipes_.end()) return status_reply(m, NtStatus::InvalidHandle);
  rpc::RpcPipe& pipe = *it->second;
  size_t max = std::min<size_t>(m.u32(ATTR_RPC_MAX), kMaxRpcData);
  bool more = false;
  switch (m.cmd) {
    case CMD_RPC_WRITE:
      return status_reply(m, pipe.write(m.bytes(ATTR_RPC_DATA)) ? NtStatus::Success : NtStatus::PipeBroken);
    case CMD_RPC_READ: {
      Bytes out = pipe.read(max, more);
      return data_reply(m, NtStatus::Success, out, more);
    }
    case CMD_RPC_IOCTL: {
      Bytes out;
      if (!pipe.transceive(m.bytes(ATTR_RPC_DATA), max, out, more)) return status_reply(m, NtStatus::PipeBroken);
      return data_reply(m, NtStatus::Success, out, more);
    }
    default:  // CMD_RPC_CLOSE
      pipes_.erase(it);
      return status_reply(m, NtStatus::Success);
  }
}

void CtlServer::drop_pipes(const char* why) {
  if (pipes_.empty()) return;
  LOG_INFO("ctl: closing %zu pipes (%s)", pipes_.size(), why);
  pipes_.clear();
}

}  // namespace ringsmb::ipc
