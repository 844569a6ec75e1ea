// Assembles a running ringsmbd: shared context, control plane, workers.
#pragma once

#include <functional>
#include <string>

#include "config/config.hpp"

namespace ringsmb::transport {

struct ServerOptions {
  bool force_epoll = false;
  // Called once every worker listens (systemd readiness, the demo banner).
  std::function<void()> on_ready;
};

// Runs until SIGINT or SIGTERM. Returns the process exit code.
int run_server(const config::Config& cfg, const ServerOptions& opts);

}  // namespace ringsmb::transport
