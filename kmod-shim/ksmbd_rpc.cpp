// IPC$ pipes for ksmbd.ko: the kernel relays DCE/RPC bytes of srvsvc,
// wkssvc, lsarpc and samr; the policy engine's pipe table runs them, the
// same code ringsmbd's pipes reach through ringsmb-ctld.
#include <cstring>

#include "common/log.hpp"
#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_shim.hpp"
#include "kmod-shim/ksmbd_structs.hpp"

namespace ringsmb::kmod {

namespace {

// The pipe the kernel opened by name, from the flags it sends.
const char* pipe_name(uint32_t flags) {
  if (flags & abi::kRpcSamr) return "samr";
  if (flags & abi::kRpcLsarpc) return "lsarpc";
  if (flags & abi::kRpcSrvsvc) return "srvsvc";
  if (flags & abi::kRpcWkssvc) return "wkssvc";
  return nullptr;
}

uint32_t rpc_status(NtStatus s) {
  switch (s) {
    case NtStatus::Success: return abi::kRpcOk;
    case NtStatus::InvalidHandle: return abi::kRpcBadFid;
    case NtStatus::ObjectNameNotFound: return abi::kRpcNotImplemented;
    case NtStatus::InsufficientResources: return abi::kRpcNoMemory;
    case NtStatus::PipeBroken: return abi::kRpcBadData;
    default: return abi::kRpcBadFunction;
  }
}

Bytes rpc_reply(uint32_t handle, const ipc::PipeReply& r, bool with_data) {
  auto resp = zeroed<abi::RpcCommand>();
  resp.handle = handle;
  resp.flags = rpc_status(r.status);
  if (!with_data || r.status != NtStatus::Success) return struct_bytes(resp);
  resp.payload_size = uint32_t(r.data.size());
  return struct_bytes(resp, r.data);
}

}  // namespace

Bytes KsmbdShim::on_rpc(ByteSpan p) {
  auto req = read_struct<abi::RpcCommand>(p);
  if (!req) return struct_bytes(zeroed<abi::RpcCommand>());
  ByteSpan data = p.subspan(sizeof(abi::RpcCommand));
  if (req->payload_size < data.size()) data = data.first(req->payload_size);
  uint32_t h = req->handle, f = req->flags;
  if (f & abi::kRpcOpen) {
    const char* name = pipe_name(f);
    ipc::PipeReply r;
    r.status = NtStatus::ObjectNameNotFound;
    // The kernel does not say whose session opens the pipe: the pipe runs
    // as an ordinary (non-admin) user; RESTRICTED marks a guest's calls.
    if (name) r = policy_->pipe_open({h, name, "", (f & abi::kRpcRestricted) != 0});
    return rpc_reply(h, r, false);
  }
  if (f & abi::kRpcClose) {
    policy_->pipe_close(h);
    return rpc_reply(h, ipc::PipeReply{NtStatus::Success, {}, false}, false);
  }
  if (f & abi::kRpcWrite) return rpc_reply(h, policy_->pipe_write(h, data), false);
  if (f & abi::kRpcIoctl) return rpc_reply(h, policy_->pipe_transceive(h, data, abi::kRpcMaxReply), true);
  if (f & abi::kRpcRead) return rpc_reply(h, policy_->pipe_read(h, abi::kRpcMaxReply), true);
  // RAP (SMB1 LANMAN) and anything newer.
  auto resp = zeroed<abi::RpcCommand>();
  resp.handle = h;
  resp.flags = abi::kRpcNotImplemented;
  return struct_bytes(resp);
}

}  // namespace ringsmb::kmod
