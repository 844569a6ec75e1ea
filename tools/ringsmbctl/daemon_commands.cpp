// `ringsmbctl reload`, `shutdown` and `debug`, sent over netlink
// (daemon/ipc/ctl_abi.hpp) to ringsmb-ctld when it runs, else to ringsmbd
// (a server started with --no-ctld); `debug` to both.
#include <iostream>
#include <memory>

#include "common/log.hpp"
#include "ctl.hpp"

namespace ringsmb::ctl {
namespace {

using namespace ipc::abi;

int cmd_reload(const Context& ctx) {
  // A file with errors still names the state directory: the server is
  // asked anyway, so that it refuses the reload and its log says why.
  auto cfg = load_config_for_server(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  auto r = reload_server(*cfg, ctx.config_path);
  if (!r) return fail(r.error());
  for (const auto& w : r->warnings) std::cerr << "warning: " << w << "\n";
  std::cout << "reloaded (" << r->by << "): new logins and tree connects use " << ctx.config_path
            << " and the users db; connected clients keep their sessions\n";
  return kExitOk;
}

int cmd_shutdown(const Context& ctx) {
  auto cfg = load_config_for_server(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
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

// Sets (LEVEL >= 0) or shows the log level of every running daemon.
int cmd_debug(const Context& ctx, int level) {
  auto cfg = load_config_for_server(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  std::vector<std::pair<Attr, uint32_t>> attrs;
  if (level >= 0) attrs.push_back({ATTR_LOG_LEVEL, uint32_t(level)});
  int answered = 0, rc = kExitOk;
  for (Daemon d : {Daemon::Ringsmbd, Daemon::Ctld}) {
    auto a = ask(*cfg, d, CMD_DEBUG, std::nullopt, attrs);
    if (!a && a.error().code == kExitNotRunning) continue;
    if (!a) return fail(a.error());
    ++answered;
    if (a->status != NtStatus::Success) {
      rc = fail(std::string(daemon_name(d)) + ": " + (a->text.empty() ? "refused" : a->text));
      continue;
    }
    uint32_t now = 0;
    if (!a->datagrams.empty())
      if (auto m = ipc::parse_message(a->datagrams.back().data(), a->datagrams.back().size())) now = m->u32(ATTR_LOG_LEVEL);
    std::cout << daemon_name(d) << ": log level " << now << "\n";
  }
  if (answered == 0) return fail(kExitNotRunning, "the server is not running");
  return rc;
}

}  // namespace

void add_daemon_commands(CLI::App& app, Context& ctx) {
  app.add_subcommand("reload",
                     "Make the running server re-read the configuration and the user database (also: SIGHUP to "
                     "ringsmbd, systemctl reload ringsmb); connected clients are not dropped; prints the file's "
                     "warnings; exit 1 when the server refuses a bad file")
      ->callback([&ctx] { ctx.exit_code = cmd_reload(ctx); });
  app.add_subcommand("shutdown", "Stop the server (ringsmbd and ringsmb-ctld)")
      ->callback([&ctx] { ctx.exit_code = cmd_shutdown(ctx); });
  auto level = std::make_shared<int>(-1);
  auto* debug = app.add_subcommand(
      "debug", "Set the log level of the running ringsmbd and ringsmb-ctld now, until the next reload; without "
               "LEVEL, show it");
  debug->add_option("LEVEL", *level, "0 errors and warnings, 1 notices, 2-10 debug (the 'log level' key's scale)")
      ->check(CLI::Range(0, kMaxLogLevel));
  debug->callback([&ctx, level] { ctx.exit_code = cmd_debug(ctx, *level); });
}

}  // namespace ringsmb::ctl
