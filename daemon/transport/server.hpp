// Assembles a running ringsmbd: shared context, control plane, workers.
#pragma once

#include <functional>
#include <string>

#include "config/config.hpp"
#include "ipc/control_plane.hpp"
#include "ipc/netlink_control_plane.hpp"

namespace ringsmb::transport {

struct ServerOptions {
  bool force_epoll = false;
  // Control plane: in-process (LocalControlPlane) unless use_ctld; then
  // ringsmb-ctld over netlink, spawned and supervised from ctld.ctld_path
  // (or found through its pid file when that is empty).
  bool use_ctld = false;
  ipc::NetlinkOptions ctld;
  // The file cfg came from: reload (SIGHUP, `ringsmbctl reload`) re-reads
  // it. Empty (the demo): reload only re-reads the user database.
  std::string config_path;
  // Called once every worker listens (systemd readiness, the demo banner).
  std::function<void()> on_ready;
};

// Runs until SIGINT or SIGTERM; SIGHUP reloads shares and users. Serves
// ringsmbctl's admin commands (admin_endpoint.hpp) and tells systemd about
// its state when started by it (common/sd_notify.hpp). Returns the process
// exit code.
int run_server(const config::Config& cfg, const ServerOptions& opts);

}  // namespace ringsmb::transport
