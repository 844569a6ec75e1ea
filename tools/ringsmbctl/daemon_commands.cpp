// `ringsmbctl reload` and `ringsmbctl shutdown`, sent over netlink
// (daemon/ipc/ctl_abi.hpp) to ringsmb-ctld when it runs, else to ringsmbd
// (a server started with --no-ctld).
#include <iostream>

#include "ctl.hpp"

namespace ringsmb::ctl {
namespace {

using namespace ipc::abi;

int cmd_reload(const Context& ctx) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail(cfg.error());
  auto r = reload_server(*cfg);
  if (!r) return fail(r.error());
  std::cout << "reloaded (" << *r << "): new logins and tree connects use " << ctx.config_path
            << " and the users db; connected clients keep their sessions\n";
  return kExitOk;
}

int cmd_shutdown(const Context& ctx) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail(cfg.error());
  // ctld forwards SHUTDOWN to the ringsmbd registered with it; without ctld,
  // ringsmbd stops by itself.
  auto a = ask(*cfg, Daemon::Ctld, CMD_SHUTDOWN);
  if (!a && a.error().code == kExitNotRunning) a = ask(*cfg, Daemon::Ringsmbd, CMD_SHUTDOWN);
  if (!a && a.error().code == kExitNotRunning) return fail(kExitNotRunning, "the server is not running");
  if (!a) return fail(a.error());
  if (a->status != NtStatus::Success) return fail("shutdown failed" + (a->text.empty() ? "" : ": " + a->text));
  std::cout << "the server is shutting down\n";
  return kExitOk;
}

}  // namespace

void add_daemon_commands(CLI::App& app, Context& ctx) {
  app.add_subcommand("reload",
                     "Make the running server re-read the configuration and the user database (also: SIGHUP to "
                     "ringsmbd, systemctl reload ringsmb); connected clients are not dropped")
      ->callback([&ctx] { ctx.exit_code = cmd_reload(ctx); });
  app.add_subcommand("shutdown", "Stop the server (ringsmbd and ringsmb-ctld)")
      ->callback([&ctx] { ctx.exit_code = cmd_shutdown(ctx); });
}

}  // namespace ringsmb::ctl
