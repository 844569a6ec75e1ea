// IPC$ pipes served in-process: a table of rpc::RpcPipe by the data
// plane's handle, safe to call from every worker thread. LocalControlPlane
// serves its pipe_* calls with one; a control plane that swaps its engine
// on reload can keep one of its own, since each pipe holds the
// configuration it was opened with.
#pragma once

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

namespace ringsmb::ipc {

class LocalPipes {
 public:
  LocalPipes();
  ~LocalPipes();
  LocalPipes(const LocalPipes&) = delete;
  LocalPipes& operator=(const LocalPipes&) = delete;

  // ObjectNameNotFound for a pipe we do not serve. A reused handle
  // replaces the pipe it named.
  PipeReply open(const PipeOpenRequest& req, std::shared_ptr<const config::Config> config);
  PipeReply write(uint32_t handle, ByteSpan data);
  PipeReply read(uint32_t handle, uint32_t max);
  PipeReply transceive(uint32_t handle, ByteSpan in, uint32_t max);
  void close(uint32_t handle);
  size_t size();

 private:
  struct Entry {
    std::shared_ptr<const config::Config> config;  // declared first: outlives the pipe
    std::unique_ptr<rpc::RpcPipe> pipe;
  };
  // RPC calls are short and touch no network: one lock for the table.
  std::mutex mu_;
  std::map<uint32_t, Entry> pipes_;
};

}  // namespace ringsmb::ipc
