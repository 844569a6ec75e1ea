// ringsmb-ctld's request channels (ctl_abi.hpp, TRANSPORT): one socket per
// peer socket of ringsmbd, connect()ed to that peer, so that the kernel
// refuses every datagram from any other port and a local user cannot fill
// the queue a login travels through. Opened on STARTING_UP, closed when the
// peer is gone (its process exited, or a send to it is refused).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "ipc/nl_socket.hpp"

namespace ringsmb::ctld {

class ChannelSet {
 public:
  // Bounded: every channel is a descriptor and a 64 KiB buffer.
  static constexpr size_t kMaxChannels = 256;

  // A socket connected to PEER_PORT (of process PEER_PID); its port id, or
  // 0 when no room is left after dropping the channels of dead processes.
  uint32_t open(uint32_t peer_port, pid_t peer_pid);
  // The channel whose peer is PEER_PORT, or nullptr.
  ipc::NlSocket* find(uint32_t peer_port);
  void close(uint32_t peer_port);
  // Drops the channels whose process has exited.
  void prune_dead();
  size_t size() const { return channels_.size(); }
  ipc::NlSocket& at(size_t i) { return channels_[i]->sock; }

 private:
  struct Channel {
    ipc::NlSocket sock;
    pid_t peer_pid = 0;
  };
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace ringsmb::ctld
