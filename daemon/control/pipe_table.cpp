#include "control/pipe_table.hpp"

#include "rpc/pipe.hpp"

namespace ringsmb::ipc {

LocalPipes::LocalPipes() = default;
LocalPipes::~LocalPipes() = default;

PipeReply LocalPipes::open(const PipeOpenRequest& req, std::shared_ptr<const config::Config> config) {
  rpc::RpcContext ctx;
  ctx.config = config.get();
  ctx.user = req.user;
  ctx.is_guest = req.is_guest;
  PipeReply reply;
  auto pipe = config ? rpc::RpcPipe::open(req.pipe, ctx) : nullptr;
  if (!pipe) {
    reply.status = NtStatus::ObjectNameNotFound;
    return reply;
  }
  std::lock_guard lock(mu_);
  pipes_[req.handle] = Entry{std::move(config), std::move(pipe)};
  reply.status = NtStatus::Success;
  return reply;
}

PipeReply LocalPipes::write(uint32_t handle, ByteSpan data) {
  PipeReply reply;
  std::lock_guard lock(mu_);
  auto it = pipes_.find(handle);
  if (it == pipes_.end()) reply.status = NtStatus::InvalidHandle;
  else reply.status = it->second.pipe->write(data) ? NtStatus::Success : NtStatus::PipeBroken;
  return reply;
}

PipeReply LocalPipes::read(uint32_t handle, uint32_t max) {
  PipeReply reply;
  std::lock_guard lock(mu_);
  auto it = pipes_.find(handle);
  if (it == pipes_.end()) {
    reply.status = NtStatus::InvalidHandle;
    return reply;
  }
  reply.data = it->second.pipe->read(max, reply.more);
  reply.status = NtStatus::Success;
  return reply;
}

PipeReply LocalPipes::transceive(uint32_t handle, ByteSpan in, uint32_t max) {
  PipeReply reply;
  std::lock_guard lock(mu_);
  auto it = pipes_.find(handle);
  if (it == pipes_.end()) {
    reply.status = NtStatus::InvalidHandle;
    return reply;
  }
  bool ok = it->second.pipe->transceive(in, max, reply.data, reply.more);
  reply.status = ok ? NtStatus::Success : NtStatus::PipeBroken;
  if (!ok) reply.data.clear();
  return reply;
}

void LocalPipes::close(uint32_t handle) {
  std::lock_guard lock(mu_);
  pipes_.erase(handle);
}

size_t LocalPipes::size() {
  std::lock_guard lock(mu_);
  return pipes_.size();
}

}  // namespace ringsmb::ipc
