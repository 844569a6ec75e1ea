// ringsmbd --no-ctld: the in-process control plane, re-created from the
// configuration file on reload (SIGHUP, `ringsmbctl reload`). New logins and
// tree connects use the new one; sessions and trees that exist keep what
// they were granted, exactly as with ringsmb-ctld.
#pragma once

#include <expected>
#include <memory>
#include <string>

#include "ipc/control_plane.hpp"

namespace ringsmb::control {

class ReloadingControlPlane : public ipc::ControlPlane {
 public:
  // Re-reads CONFIG_PATH; on a bad file the running configuration stays
  // and the parser's message ("FILE:LINE: ...") is returned.
  virtual std::expected<void, std::string> reload_config() = 0;
};

std::unique_ptr<ReloadingControlPlane> make_reloading_local_control_plane(const config::Config& cfg,
                                                                          std::string config_path);

}  // namespace ringsmb::control
