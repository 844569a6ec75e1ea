#include "ringsmb-ctld/ctl_channels.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace ringsmb::ctld {

uint32_t ChannelSet::open(uint32_t peer_port, pid_t peer_pid) {
  close(peer_port);  // a peer that re-opens (after our restart or its own) gets a fresh one
  if (channels_.size() >= kMaxChannels) prune_dead();
  if (channels_.size() >= kMaxChannels) {
    LOG_WARN("ctl: %zu request channels are open; refusing another (pid %d)", channels_.size(), int(peer_pid));
    return 0;
  }
  auto s = ipc::NlSocket::open(0);
  if (!s) {
    LOG_WARN("ctl: request channel: %s", s.error().c_str());
    return 0;
  }
  if (int err = s->connect_to(peer_port)) {
    LOG_WARN("ctl: request channel to port %u: %s", peer_port, strerror(err));
    return 0;
  }
  auto c = std::make_unique<Channel>();
  c->sock = std::move(*s);
  c->peer_pid = peer_pid;
  uint32_t port = c->sock.port();
  channels_.push_back(std::move(c));
  LOG_DEBUG("ctl: request channel %u for port %u (pid %d)", port, peer_port, int(peer_pid));
  return port;
}

ipc::NlSocket* ChannelSet::find(uint32_t peer_port) {
  for (auto& c : channels_)
    if (c->sock.peer() == peer_port) return &c->sock;
  return nullptr;
}

void ChannelSet::close(uint32_t peer_port) {
  std::erase_if(channels_, [&](const auto& c) { return c->sock.peer() == peer_port; });
}

void ChannelSet::prune_dead() {
  std::erase_if(channels_, [](const auto& c) { return kill(c->peer_pid, 0) != 0 && errno == ESRCH; });
}

}  // namespace ringsmb::ctld
