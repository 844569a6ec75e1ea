// data plane = ksmbd: ringsmb-ctld registers with ksmbd.ko at start-up and
// answers its events until it stops. Start-up fails with a sentence when
// the module is missing, speaks another ABI version, is too old, or is
// already driven by another daemon.
#pragma once

#include <expected>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "kmod-shim/ksmbd_link.hpp"
#include "kmod-shim/ksmbd_shim.hpp"

namespace ringsmb::kmod {

class KsmbdDriver {
 public:
  static std::expected<std::unique_ptr<KsmbdDriver>, std::string> start(const config::Config& cfg);
  int fd() const { return link_.fd(); }
  // Answers every event waiting on the socket.
  void on_readable();
  void reload(const config::Config& cfg) { shim_.reload(cfg); }

 private:
  KsmbdDriver(KsmbdLink link, const config::Config& cfg) : link_(std::move(link)), shim_(cfg) {}
  KsmbdLink link_;
  KsmbdShim shim_;
};

// Stops ksmbd's server (closes its listener and connections) through
// /sys/class/ksmbd-control/kill_server, so that stopping the daemon stops
// the service instead of leaving a server whose logins time out. The module
// then waits for the next STARTING_UP.
void stop_ksmbd_server();

}  // namespace ringsmb::kmod
