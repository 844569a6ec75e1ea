// `user disable NAME` and `user enable NAME` (Samba's smbpasswd -d / -e):
// the "disabled" flag of the user's record in the users db. A disabled
// user's logins get ACCOUNT_DISABLED; sessions already open are kept, as
// Samba keeps them (`ringsmbctl session close` ends one).
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "auth/user_db.hpp"
#include "ctl.hpp"

namespace ringsmb::ctl {
namespace {

int save_failure(const std::string& error) {
  for (int e : {EACCES, EPERM, EROFS})
    if (error.find(std::strerror(e)) != std::string::npos)
      return fail(kExitPermission, "permission denied: run as root (" + error + ")");
  return fail(error);
}

int cmd_set_disabled(const Context& ctx, const std::string& name, bool disabled) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  const std::string& path = cfg->global.users_db;
  auto db = auth::UserDb::load(path);
  if (!db) return fail_loading(db.error());
  const auth::UserRecord* cur = db->find(name);
  if (cur == nullptr) return fail(kExitNotFound, "user '" + name + "' not found");
  const char* what = disabled ? "disabled" : "enabled";
  if (cur->disabled == disabled) {
    std::cout << "user '" << cur->name << "' is already " << what << "\n";
    return kExitOk;
  }
  auth::UserRecord rec = *cur;
  rec.disabled = disabled;
  db->upsert(rec);
  if (auto s = db->save(path); !s) return save_failure(s.error());
  std::cout << what << " user '" << rec.name << "'"
            << (disabled ? " (new logins get ACCOUNT_DISABLED; open sessions stay until they end or "
                           "'ringsmbctl session close')"
                         : "")
            << "\n";
  return apply_to_running_server(ctx);
}

}  // namespace

void add_user_state_commands(CLI::App& app, Context& ctx) {
  CLI::App* user = app.get_subcommand("user");
  auto name = std::make_shared<std::string>();
  auto* disable = user->add_subcommand(
      "disable", "Disable a user: logins are refused with ACCOUNT_DISABLED, the password is kept (smbpasswd -d)");
  disable->add_option("NAME", *name, "SMB user name")->required();
  disable->callback([&ctx, name] { ctx.exit_code = cmd_set_disabled(ctx, *name, true); });
  auto* enable = user->add_subcommand("enable", "Enable a disabled user again (smbpasswd -e)");
  enable->add_option("NAME", *name, "SMB user name")->required();
  enable->callback([&ctx, name] { ctx.exit_code = cmd_set_disabled(ctx, *name, false); });
}

}  // namespace ringsmb::ctl
