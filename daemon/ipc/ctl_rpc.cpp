// RPC_* requests: DCE/RPC on IPC$ pipes runs here in the control plane,
// next to the configuration and the user database (daemon/rpc). ringsmbd
// only relays the bytes of the client's WRITE, READ and TRANSCEIVE.
#include <algorithm>

#include "common/log.hpp"
#include "ipc/ctl_server.hpp"

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
      return status_reply(m, pipe.write(m.bytes(ATTR_RPC_DATA)) ? NtStatus::Success : NtStatus::InvalidParameter);
    case CMD_RPC_READ: {
      Bytes out = pipe.read(max, more);
      return data_reply(m, NtStatus::Success, out, more);
    }
    case CMD_RPC_IOCTL: {
      Bytes out;
      if (!pipe.transceive(m.bytes(ATTR_RPC_DATA), max, out, more)) return status_reply(m, NtStatus::InvalidParameter);
      return data_reply(m, NtStatus::Success, out, more);
    }
    default:  // CMD_RPC_CLOSE
      pipes_.erase(it);
      return status_reply(m, NtStatus::Success);
  }
}

}  // namespace ringsmb::ipc
