// ringsmbctl: administration tool for ringsmb. For now it edits the files
// directly; once the control daemon exists, commands will go through it.
#include <exception>
#include <iostream>

#include "ctl.hpp"

namespace ringsmb::ctl {

int fail(const std::string& message) {
  std::cerr << "ringsmbctl: " << message << "\n";
  return kExitError;
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
  CLI::App app{"ringsmbctl: manage the ringsmb SMB server (users, configuration)", "ringsmbctl"};
  app.footer(
      "Exit status:\n"
      "  0  success\n"
      "  1  error (bad configuration, unknown user, I/O failure, ...)\n"
      "  2  usage error (unknown command or option, missing argument)");
  // Lets -c/--config appear after the subcommand too ("ringsmbctl user list -c x").
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("-c,--config", ctx.config_path, "Configuration file")->capture_default_str();
  add_user_commands(app, ctx);
  add_config_commands(app, ctx);
  add_daemon_commands(app, ctx);
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
