// The policy engine behind both control planes: ringsmbd runs it in its own
// process (--no-ctld, --demo) and ringsmb-ctld answers the data plane's
// netlink requests with it, so the two modes decide logins, tree connects
// and pipes identically.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "config/config.hpp"
#include "ipc/control_plane.hpp"

namespace ringsmb::control {

// The share as configured (IPC$ always exists), without any access decision:
// what SHARE_CONFIG answers and what TREE_CONNECT returns once access is granted.
std::optional<ipc::ShareInfo> share_info(const config::Config& cfg, std::string_view name);
// The same for a share already chosen (a home share, %-tokens expanded).
ipc::ShareInfo share_info(const config::Config& cfg, const config::ShareConfig& share);

// Reads the config and the user database directly; the user database is
// re-read when its file changes.
std::unique_ptr<ipc::ControlPlane> make_local_control_plane(const config::Config& cfg);

}  // namespace ringsmb::control
