// ringsmbctl: administration tool for ringsmb. Users and shares are edited
// in their files (the users db, ringsmb.conf); a running server is then
// asked to reload. status, reload, shutdown and session close talk to the
// running daemons over netlink (server_link.cpp).
#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>

#include "ctl.hpp"

namespace ringsmb::ctl {

int fail(const std::string& message) { return fail(kExitError, message); }

int fail(int code, const std::string& message) {
  std::cerr << "ringsmbctl: " << message << "\n";
  return code;
}

int fail(const Failure& f) { return fail(f.code, f.message); }

int fail_loading(const std::string& message) {
  if (message.find(std::strerror(EACCES)) != std::string::npos || message.find(std::strerror(EPERM)) != std::string::npos)
    return fail(kExitPermission, message + " (run as root)");
  return fail(kExitError, message);
}

std::expected<config::Config, std::string> load_config(const std::string& path) {
  auto parsed = config::parse_config_file(path);
  if (!parsed) return std::unexpected(parsed.error());
  return std::move(parsed->config);
}

}  // namespace ringsmb::ctl

int main(int argc, char** argv) {
  using namespace ringsmb::ctl;
  Context ctx;
  CLI::App app{"ringsmbctl: manage the ringsmb SMB server (users, shares, status)", "ringsmbctl"};
  app.footer(kExitCodesHelp);
  // Lets -c/--config appear after the subcommand too ("ringsmbctl user list -c x").
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("-c,--config", ctx.config_path, "Configuration file")->capture_default_str();
  app.add_flag("--no-reload", ctx.no_reload,
               "After a user or share edit, do not ask the running server to reload (run 'ringsmbctl reload' later)");
  add_user_commands(app, ctx);
  add_share_commands(app, ctx);
  add_status_commands(app, ctx);
  add_config_commands(app, ctx);
  add_daemon_commands(app, ctx);
  add_discovery_commands(app, ctx);
  add_import_commands(app, ctx);
  add_recycle_commands(app, ctx);
  add_domain_commands(app, ctx);
  add_close_commands(app, ctx);
  add_user_state_commands(app, ctx);
  // Every subcommand, however deep, shows the exit codes in its --help.
  std::function<void(CLI::App*)> footers = [&](CLI::App* a) {
    for (CLI::App* sub : a->get_subcommands({})) {
      sub->footer(kExitCodesHelp);
      footers(sub);
    }
  };
  footers(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return ctx.exit_code;
}
