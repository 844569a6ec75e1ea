// IPC$ pipes served by the policy engine: a table of rpc::RpcPipe by the
// data plane's handle, safe to call from every worker thread. The
// in-process control plane (LocalControlPlane) and ringsmb-ctld's netlink
// server (CtlServer) both keep their pipes in one, so the two modes share
// the same bound and refuse the same way when it is reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "common/bytes.hpp"
#include "config/config.hpp"
#include "ipc/control_plane.hpp"

namespace ringsmb::rpc {
class RpcPipe;
}

namespace ringsmb::control {

class PipeTable {
 public:
  // How many pipes may be open at once: each holds an RPC conversation's
  // buffers, and the handles come from the network.
  static constexpr size_t kMaxOpenPipes = 16384;

  explicit PipeTable(size_t max_open = kMaxOpenPipes);
  ~PipeTable();
  PipeTable(const PipeTable&) = delete;
  PipeTable& operator=(const PipeTable&) = delete;

  // ObjectNameNotFound for a pipe we do not serve; InsufficientResources
  // when the table is full. A reused handle replaces the pipe it named
  // (one ringsmbd forgot to close). CONFIG is what the pipe's RPC calls
  // read; it is kept alive for as long as the pipe.
  // HOME_SHARE: the caller's own home share ([homes]), which srvsvc lists; empty: none.
  ipc::PipeReply open(const ipc::PipeOpenRequest& req, std::shared_ptr<const config::Config> config,
                      const std::string& home_share = {});
  ipc::PipeReply write(uint32_t handle, ByteSpan data);
  ipc::PipeReply read(uint32_t handle, uint32_t max);
  ipc::PipeReply transceive(uint32_t handle, ByteSpan in, uint32_t max);
  // False when HANDLE was not open.
  bool close(uint32_t handle);
  // Closes every pipe; returns how many were open.
  size_t clear();
  size_t size();

 private:
  struct Entry {
    std::shared_ptr<const config::Config> config;  // declared first: outlives the pipe
    std::unique_ptr<rpc::RpcPipe> pipe;
  };
  // Runs CALL(pipe, reply) under the lock on the pipe HANDLE names;
  // InvalidHandle when none does.
  template <typename Call>
  ipc::PipeReply with_pipe(uint32_t handle, Call call);

  // RPC calls are short and touch no network: one lock for the table.
  std::mutex mu_;
  size_t max_open_;
  std::map<uint32_t, Entry> pipes_;
};

}  // namespace ringsmb::control
