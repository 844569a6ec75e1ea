// `user add|del|passwd|list`: edit the users db named by the config's
// "users db" key.
#include <pwd.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "ctl.hpp"
#include "json_out.hpp"

namespace ringsmb::ctl {

namespace {

struct UserOptions {
  std::string name;
  std::string unix_user;
  bool password_stdin = false;
};

// The db's directory (e.g. /var/lib/ringsmb) may not exist before the first
// user is added; create the last level only, private like the file itself.
std::expected<void, std::string> ensure_parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  std::string dir = path.substr(0, slash);
  if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return {};
  return std::unexpected(dir + ": cannot create directory: " + std::strerror(errno));
}

// Loads config and users db; both failures are reported the same way.
struct Loaded {
  std::string db_path;
  auth::UserDb db;
};
std::expected<Loaded, std::string> load_db(const Context& ctx) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return std::unexpected(cfg.error());
  auto db = auth::UserDb::load(cfg->global.users_db);
  if (!db) return std::unexpected(db.error());
  return Loaded{cfg->global.users_db, std::move(*db)};
}

int save_failure(const std::string& error) {
  if (error.find(std::strerror(EACCES)) != std::string::npos || error.find(std::strerror(EPERM)) != std::string::npos ||
      error.find(std::strerror(EROFS)) != std::string::npos)
    return fail(kExitPermission, "permission denied: run as root (" + error + ")");
  return fail(error);
}

int save_db(const Loaded& l) {
  if (auto d = ensure_parent_dir(l.db_path); !d) return save_failure(d.error());
  if (auto s = l.db.save(l.db_path); !s) return save_failure(s.error());
  return kExitOk;
}

// With --password-stdin the password is read before anything is checked,
// so that a program writing it (a pipe, Cockpit's bridge) never meets a
// closed pipe and gets ringsmbctl's own error message instead.
std::optional<std::expected<std::string, std::string>> password_from_stdin_first(const UserOptions& o) {
  if (!o.password_stdin) return std::nullopt;
  return read_password(true);
}

int cmd_add(const Context& ctx, const UserOptions& o) {
  auto early_pw = password_from_stdin_first(o);
  if (!auth::is_valid_user_name(o.name))
    return fail("invalid user name '" + o.name + "' (1-64 characters, none of \"/\\[]:;|=,+*?<>@)");
  std::string unix_user = o.unix_user.empty() ? o.name : o.unix_user;
  if (::getpwnam(unix_user.c_str()) == nullptr) return fail(kExitNotFound, "unix user '" + unix_user + "' does not exist");
  auto l = load_db(ctx);
  if (!l) return fail_loading(l.error());
  auto pw = early_pw ? *early_pw : read_password(false);
  if (!pw) return fail(pw.error());
  const auth::UserRecord* old = l->db.find(o.name);
  bool existed = old != nullptr;
  // A replaced user keeps its state: `user enable` is the way back in.
  bool disabled = old && old->disabled;
  l->db.upsert({o.name, unix_user, auth::nt_hash_from_password(*pw), disabled});
  if (int rc = save_db(*l); rc != kExitOk) return rc;
  std::cout << (existed ? "replaced" : "added") << " user '" << o.name << "' (unix user '" << unix_user << "')\n";
  return apply_to_running_server(ctx);
}

int cmd_del(const Context& ctx, const UserOptions& o) {
  auto l = load_db(ctx);
  if (!l) return fail_loading(l.error());
  if (!l->db.remove(o.name)) return fail(kExitNotFound, "user '" + o.name + "' not found");
  if (int rc = save_db(*l); rc != kExitOk) return rc;
  std::cout << "deleted user '" << o.name << "' (sessions it has open stay until they end)\n";
  return apply_to_running_server(ctx);
}

int cmd_passwd(const Context& ctx, const UserOptions& o) {
  auto early_pw = password_from_stdin_first(o);
  auto l = load_db(ctx);
  if (!l) return fail_loading(l.error());
  const auth::UserRecord* cur = l->db.find(o.name);
  if (cur == nullptr) return fail(kExitNotFound, "user '" + o.name + "' not found");
  auth::UserRecord rec = *cur;
  auto pw = early_pw ? *early_pw : read_password(false);
  if (!pw) return fail(pw.error());
  rec.nt_hash = auth::nt_hash_from_password(*pw);
  l->db.upsert(std::move(rec));
  if (int rc = save_db(*l); rc != kExitOk) return rc;
  std::cout << "changed password for user '" << o.name << "'\n";
  return apply_to_running_server(ctx);
}

int cmd_list(const Context& ctx, bool as_json) {
  auto l = load_db(ctx);
  if (!l) return fail_loading(l.error());
  if (as_json) {
    std::vector<std::string> items;
    for (const auto& u : l->db.users()) items.push_back(json::Object().add("name", u.name).add("unix_user", u.unix_user).add("disabled", u.disabled).str());
    std::cout << json::document("users", items);
    return kExitOk;
  }
  size_t width = 4;
  for (const auto& u : l->db.users()) width = std::max(width, u.name.size());
  std::cout << std::left << std::setw(static_cast<int>(width)) << "NAME" << "  UNIX USER\n";
  for (const auto& u : l->db.users())
    std::cout << std::left << std::setw(static_cast<int>(width)) << u.name << "  " << u.unix_user
              << (u.disabled ? "  (disabled)" : "") << "\n";
  return kExitOk;
}

CLI::App* name_command(CLI::App& parent, const char* name, const char* help, UserOptions& o) {
  auto* sub = parent.add_subcommand(name, help);
  sub->add_option("NAME", o.name, "SMB user name")->required();
  return sub;
}

}  // namespace

void add_user_commands(CLI::App& app, Context& ctx) {
  auto* user = app.add_subcommand("user", "Manage SMB users (the users db file); a running server is then reloaded");
  user->require_subcommand(1);
  auto o = std::make_shared<UserOptions>();

  auto* add = name_command(*user, "add", "Add a user, or replace an existing one", *o);
  add->add_option("--unix-user", o->unix_user, "Unix account the user's file access runs as (default: NAME)");
  add->add_flag("--password-stdin", o->password_stdin,
                "Read the password from one line of stdin (default: prompt twice on the terminal, without echo)");
  add->callback([&ctx, o] { ctx.exit_code = cmd_add(ctx, *o); });

  auto* del = name_command(*user, "del", "Delete a user", *o);
  del->callback([&ctx, o] { ctx.exit_code = cmd_del(ctx, *o); });

  auto* passwd = name_command(*user, "passwd", "Change a user's password", *o);
  passwd->add_flag("--password-stdin", o->password_stdin, "Read the password from one line of stdin");
  passwd->callback([&ctx, o] { ctx.exit_code = cmd_passwd(ctx, *o); });

  auto* list = user->add_subcommand("list", "List users");
  auto list_json = std::make_shared<bool>(false);
  list->add_flag("--json", *list_json, "Print JSON (ringsmbctl(8))");
  list->callback([&ctx, list_json] { ctx.exit_code = cmd_list(ctx, *list_json); });
}

}  // namespace ringsmb::ctl
