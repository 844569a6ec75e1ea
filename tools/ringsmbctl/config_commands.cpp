// `config check [FILE]`.
#include <iostream>
#include <memory>

#include "ctl.hpp"

namespace ringsmb::ctl {

namespace {

int cmd_config_check(const std::string& path) {
  auto parsed = config::parse_config_file(path);
  if (!parsed) return fail(parsed.error());
  for (const auto& w : parsed->warnings) std::cerr << "warning: " << w << "\n";
  std::cout << path << ": OK (" << parsed->config.shares.size() << " share"
            << (parsed->config.shares.size() == 1 ? "" : "s") << ", " << parsed->warnings.size() << " warning"
            << (parsed->warnings.size() == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

}  // namespace

void add_config_commands(CLI::App& app, Context& ctx) {
  auto* cfg = app.add_subcommand("config", "Inspect the configuration");
  cfg->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  auto* check = cfg->add_subcommand("check", "Parse the configuration, print warnings; exit 0 if valid, 1 if not");
  check->add_option("FILE", *file, "File to check (default: the --config file)");
  check->callback([&ctx, file] { ctx.exit_code = cmd_config_check(file->empty() ? ctx.config_path : *file); });
}

}  // namespace ringsmb::ctl
