// The data plane's client of ringsmb-ctld: the ControlPlane interface
// served over netlink (ctl_abi.hpp).
#pragma once

#include <memory>
#include <string>

#include "config/config.hpp"
#include "ipc/control_plane.hpp"

namespace ringsmb::ipc {

struct NetlinkOptions {
  // The ringsmb-ctld binary to spawn and supervise (restarted when it dies).
  // Empty: ringsmb-ctld runs on its own (systemd); it is found through
  // <state directory>/ringsmb-ctld.port.
  std::string ctld_path;
  std::string config_path;  // passed to the spawned ringsmb-ctld
  int log_level = -1;       // passed on when >= 0
  int ready_timeout_ms = 5000;  // how long the factory waits for the first handshake
};
std::unique_ptr<ControlPlane> make_netlink_control_plane(const config::Config& cfg, const NetlinkOptions& opts);

}  // namespace ringsmb::ipc
