#include "control/pipe_table.hpp"

#include "common/log.hpp"
#include "rpc/pipe.hpp"

namespace ringsmb::control {

using namespace ipc;  // the contract types (ipc/control_plane.hpp)

PipeTable::PipeTable(size_t max_open) : max_open_(max_open) {}
PipeTable::~PipeTable() = default;

PipeReply PipeTable::open(const PipeOpenRequest& req, std::shared_ptr<const config::Config> config,
                          const std::string& home_share) {
  rpc::RpcContext ctx;
  ctx.home_share = home_share;
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
  if (pipes_.size() >= max_open_ && !pipes_.contains(req.handle)) {
    LOG_WARN("%zu pipes open, refusing another", pipes_.size());
    reply.status = NtStatus::InsufficientResources;
    return reply;
  }
  pipes_[req.handle] = Entry{std::move(config), std::move(pipe)};
  reply.status = NtStatus::Success;
  return reply;
}

template <typename Call>
PipeReply PipeTable::with_pipe(uint32_t handle, Call call) {
  PipeReply reply;
  std::lock_guard lock(mu_);
  auto it = pipes_.find(handle);
  if (it == pipes_.end()) reply.status = NtStatus::InvalidHandle;
  else call(*it->second.pipe, reply);
  return reply;
}

PipeReply PipeTable::write(uint32_t handle, ByteSpan data) {
  return with_pipe(handle, [&](rpc::RpcPipe& pipe, PipeReply& reply) {
    reply.status = pipe.write(data) ? NtStatus::Success : NtStatus::PipeBroken;
  });
}

PipeReply PipeTable::read(uint32_t handle, uint32_t max) {
  return with_pipe(handle, [&](rpc::RpcPipe& pipe, PipeReply& reply) {
    reply.data = pipe.read(max, reply.more);
    reply.status = NtStatus::Success;
  });
}

PipeReply PipeTable::transceive(uint32_t handle, ByteSpan in, uint32_t max) {
  return with_pipe(handle, [&](rpc::RpcPipe& pipe, PipeReply& reply) {
    bool ok = pipe.transceive(in, max, reply.data, reply.more);
    reply.status = ok ? NtStatus::Success : NtStatus::PipeBroken;
    if (!ok) reply.data.clear();
  });
}

bool PipeTable::close(uint32_t handle) {
  std::lock_guard lock(mu_);
  return pipes_.erase(handle) != 0;
}

size_t PipeTable::clear() {
  std::map<uint32_t, Entry> dropped;
  {
    std::lock_guard lock(mu_);
    dropped.swap(pipes_);
  }
  return dropped.size();  // the pipes close here, outside the lock
}

size_t PipeTable::size() {
  std::lock_guard lock(mu_);
  return pipes_.size();
}

}  // namespace ringsmb::control
