// `config check [FILE] [--strict]` and `config show [SHARE]`.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "auth/user_db.hpp"
#include "config/config_check.hpp"
#include "config/config_dump.hpp"
#include "ctl.hpp"
#include "json_out.hpp"

namespace ringsmb::ctl {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// This machine, as the server will see it when it runs.
config::SystemView this_machine() {
  config::SystemView v;
  v.unix_user_exists = [](const std::string& name) { return ::getpwnam(name.c_str()) != nullptr; };
  v.unix_group_exists = [](const std::string& name) { return ::getgrnam(name.c_str()) != nullptr; };
  v.directory_error = [](const std::string& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  };
  v.smb_users = [](const std::string& path) -> std::expected<std::set<std::string>, std::string> {
    if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), R_OK) != 0)
      return std::unexpected(path + ": permission denied (run as root to check user names)");
    auto db = auth::UserDb::load(path);
    if (!db) return std::unexpected(db.error());
    std::set<std::string> names;
    for (const auto& u : db->users()) names.insert(lower(u.name));
    return names;
  };
  return v;
}

std::string plural(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

int cmd_config_check(const std::string& path, bool strict) {
  auto checked = config::check_config_file(path);
  if (!checked) return fail_loading(checked.error());
  config::check_system(*checked, path, this_machine());
  for (const auto& e : checked->errors) std::cerr << "error: " << e << "\n";
  for (const auto& w : checked->warnings) std::cerr << "warning: " << w << "\n";
  size_t errors = checked->errors.size(), warnings = checked->warnings.size();
  std::string counts = plural(checked->config.shares.size(), "share") + ", " + plural(errors, "error") + ", " +
                       plural(warnings, "warning");
  if (errors > 0 || (strict && warnings > 0)) {
    std::cerr << path << ": FAILED (" << counts << (errors == 0 ? "; --strict" : "") << ")\n";
    return kExitError;
  }
  std::cout << path << ": OK (" << counts << ")\n";
  return kExitOk;
}

std::string settings_json(const std::vector<config::Setting>& settings) {
  json::Object o;
  for (const auto& [key, value] : settings) o.add(key, value);
  return o.str();
}

// {"global": {...}, "shares": [{"name": ..., "settings": {...}}]}; with
// SHARE, that share alone and no "global".
int print_config_json(const config::Config& cfg, const std::string& share) {
  std::vector<std::string> shares;
  for (const auto& s : cfg.shares) {
    if (!share.empty() && &s != cfg.find_share(share)) continue;
    shares.push_back(json::Object().add("name", s.name).raw("settings", settings_json(config::share_settings(s, cfg.global))).str());
  }
  if (!share.empty() && shares.empty()) return fail(kExitNotFound, "share '" + share + "' not found");
  std::string doc = json::document("shares", shares);
  if (share.empty()) doc.insert(1, json::quote("global") + ": " + settings_json(config::global_settings(cfg.global)) + ",\n ");
  std::cout << doc;
  return kExitOk;
}

// The effective settings, as testparm -sv prints them: every key, the
// defaults included. With SHARE, that share only.
int cmd_config_show(const Context& ctx, const std::string& share, bool as_json) {
  auto parsed = config::parse_config_file(ctx.config_path);
  if (!parsed) return fail(parsed.error());
  const config::Config& cfg = parsed->config;
  if (as_json) return print_config_json(cfg, share);
  if (!share.empty()) {
    const config::ShareConfig* s = cfg.find_share(share);
    if (!s) return fail(kExitNotFound, "share '" + share + "' not found");
    std::cout << config::render_section(s->name, config::share_settings(*s, cfg.global));
    return kExitOk;
  }
  std::cout << "# effective settings of " << ctx.config_path << ", defaults included\n"
            << config::render_section("global", config::global_settings(cfg.global));
  for (const auto& s : cfg.shares)
    std::cout << "\n" << config::render_section(s.name, config::share_settings(s, cfg.global));
  return kExitOk;
}

}  // namespace

void add_config_commands(CLI::App& app, Context& ctx) {
  auto* cfg = app.add_subcommand("config", "Inspect the configuration");
  cfg->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  auto strict = std::make_shared<bool>(false);
  auto* check = cfg->add_subcommand(
      "check",
      "Check the configuration: every error and warning with FILE:LINE, and whether the users, groups and "
      "directories it names exist; exit 0 if it can be used, 1 if not");
  check->add_option("FILE", *file, "File to check (default: the --config file)");
  check->add_flag("--strict", *strict, "Warnings fail the check too (exit 1)");
  check->callback([&ctx, file, strict] { ctx.exit_code = cmd_config_check(file->empty() ? ctx.config_path : *file, *strict); });
  auto share = std::make_shared<std::string>();
  auto* show = cfg->add_subcommand("show", "Print every setting in effect, defaults included (like testparm -sv)");
  show->add_option("SHARE", *share, "Only this share's settings");
  auto show_json = std::make_shared<bool>(false);
  show->add_flag("--json", *show_json, "Print JSON (ringsmbctl(8))");
  show->callback([&ctx, share, show_json] { ctx.exit_code = cmd_config_show(ctx, *share, *show_json); });
}

}  // namespace ringsmb::ctl
