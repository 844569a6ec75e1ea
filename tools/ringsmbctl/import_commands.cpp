// `import samba [SMB.CONF]` and `import ksmbd [KSMBD.CONF]`: bring shares
// and users (with their NT hashes, so passwords stay the same) from a Samba
// or ksmbd installation. A dry run by default: the report says what would
// be imported and what cannot be, each with its file:line; --apply writes
// ringsmb.conf and the users db and reloads a running server.
#include <pwd.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "auth/user_db.hpp"
#include "config/config_editor.hpp"
#include "ctl.hpp"
#include "import.hpp"

namespace ringsmb::ctl {

namespace {

using import::Skipped;

enum class Source { Samba, Ksmbd };

struct ImportOptions {
  std::string conf;            // the old server's configuration
  std::string pdbedit = "pdbedit";
  std::string pdbedit_output;  // a saved `pdbedit -L -w` output ("-": stdin)
  std::string pwddb = "/etc/ksmbd/ksmbdpwd.db";
  bool no_users = false;
  bool apply = false;
};

// Everything the import would change, after checking it against ringsmb's
// current configuration and users.
struct Plan {
  import::ConfigPlan config;
  import::UsersPlan users;
  std::string users_source;
};

std::expected<std::string, std::string> read_text(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

import::UsersPlan read_users(Source source, const ImportOptions& o, std::string& described) {
  std::expected<std::string, std::string> text;
  if (source == Source::Ksmbd) {
    described = o.pwddb;
    text = read_text(o.pwddb);
    if (text) return import::parse_ksmbdpwd(*text, o.pwddb);
  } else if (!o.pdbedit_output.empty()) {
    described = o.pdbedit_output == "-" ? "pdbedit output on stdin" : o.pdbedit_output;
    text = read_text(o.pdbedit_output);
    if (text) return import::parse_smbpasswd(*text, o.pdbedit_output == "-" ? "stdin" : o.pdbedit_output);
  } else {
    described = o.pdbedit + " -s " + o.conf + " -L -w";
    text = import::run_pdbedit(o.pdbedit, o.conf);
    if (text) return import::parse_smbpasswd(*text, "pdbedit");
  }
  import::UsersPlan none;
  none.skipped.push_back({described, "users not imported: " + text.error()});
  return none;
}

// Drops what ringsmb already has or cannot map: shares that exist, users
// that exist, users without a Unix account of the same name.
void check_against_ringsmb(Plan& plan, const config::ConfigEditor& current, const auth::UserDb& db) {
  std::vector<import::SharePlan> shares;
  for (auto& s : plan.config.shares) {
    if (current.has_section(s.name))
      plan.config.skipped.push_back({s.where, "share [" + s.name + "]: ringsmb already has a share of that name; kept"});
    else shares.push_back(std::move(s));
  }
  plan.config.shares = std::move(shares);
  std::vector<import::UserPlan> users;
  for (auto& u : plan.users.users) {
    if (!auth::is_valid_user_name(u.name))
      plan.users.skipped.push_back({u.where, "user " + u.name + ": not a valid ringsmb user name"});
    else if (db.find(u.name) != nullptr)
      plan.users.skipped.push_back({u.where, "user " + u.name + ": already a ringsmb user; kept"});
    else if (::getpwnam(u.name.c_str()) == nullptr)
      plan.users.skipped.push_back({u.where, "user " + u.name + ": no Unix user '" + u.name +
                                                 "' on this machine (useradd " + u.name + ", then import again)"});
    else users.push_back(std::move(u));
  }
  plan.users.users = std::move(users);
}

std::string plural(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

void print_report(const Plan& p, const std::string& source_name, const std::string& conf) {
  std::cout << "Import from " << source_name << ": " << conf << "; users from " << p.users_source << "\n";
  std::cout << "\nShares (" << p.config.shares.size() << "):\n";
  for (const auto& s : p.config.shares) {
    std::cout << "  [" << s.name << "]  (" << s.where << ")\n";
    for (const auto& [k, v] : s.settings) std::cout << "      " << k << " = " << v << "\n";
  }
  std::cout << "\nGlobal settings (" << p.config.global.size() << "):\n";
  for (const auto& [k, v] : p.config.global) std::cout << "  " << k << " = " << v << "\n";
  std::cout << "\nUsers, with their passwords (NT hashes) (" << p.users.users.size() << "):\n";
  for (const auto& u : p.users.users) std::cout << "  " << u.name << "  (unix user " << u.name << "; " << u.where << ")\n";
  size_t skipped = p.config.skipped.size() + p.users.skipped.size();
  std::cout << "\nNot imported (" << skipped << "):\n";
  for (const auto* list : {&p.config.skipped, &p.users.skipped})
    for (const auto& s : *list) std::cout << "  " << s.where << ": " << s.what << "\n";
  if (p.config.warnings.empty()) return;
  std::cout << "\nWarnings for Windows clients (" << p.config.warnings.size() << "):\n";
  for (const auto& w : p.config.warnings) std::cout << "  warning: " << w.where << ": " << w.what << "\n";
}

struct Target {
  std::string config_text;
  std::string users_db;
  auth::UserDb db;
};

std::expected<Target, Failure> load_target(const Context& ctx) {
  Target t;
  std::ifstream in(ctx.config_path, std::ios::binary);
  if (in) {
    std::ostringstream ss;
    ss << in.rdbuf();
    t.config_text = ss.str();
  } else if (errno != ENOENT) {
    return std::unexpected(Failure{errno == EACCES ? kExitPermission : kExitError,
                                   ctx.config_path + ": cannot open: " + std::strerror(errno)});
  }
  auto parsed = config::parse_config_text(t.config_text, ctx.config_path);
  if (!parsed) return std::unexpected(Failure{kExitError, parsed.error()});
  t.users_db = parsed->config.global.users_db;
  auto db = auth::UserDb::load(t.users_db);
  if (!db) return std::unexpected(Failure{kExitError, db.error()});
  t.db = std::move(*db);
  return t;
}

int write_failure(const std::string& error) {
  bool denied = error.find(std::strerror(EACCES)) != std::string::npos || error.starts_with("permission denied");
  return fail(denied ? kExitPermission : kExitError, error);
}

int apply(const Context& ctx, const Plan& p, Target& t) {
  config::ConfigEditor ed(t.config_text);
  for (const auto& [k, v] : p.config.global)
    if (auto r = ed.set("global", k, v); !r) return fail("global '" + k + "': " + r.error());
  for (const auto& s : p.config.shares)
    if (auto r = ed.add_section(s.name, s.settings); !r) return fail("share [" + s.name + "]: " + r.error());
  std::string text = ed.text();
  auto parsed = config::parse_config_text(text, ctx.config_path);
  if (!parsed) return fail("nothing imported: the result would be invalid: " + parsed.error());
  if (text != t.config_text)
    if (auto w = config::write_file_atomically(ctx.config_path, text); !w) return write_failure(w.error());
  if (!p.users.users.empty()) {
    for (const auto& u : p.users.users) t.db.upsert({u.name, u.name, u.nt_hash});
    std::string dir = t.users_db.substr(0, t.users_db.rfind('/'));
    if (!dir.empty() && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return write_failure(dir + ": cannot create directory: " + std::strerror(errno));
    if (auto s = t.db.save(t.users_db); !s) return write_failure(s.error());
  }
  std::cout << "\nImported " << plural(p.config.shares.size(), "share") << ", "
            << plural(p.config.global.size(), "global setting") << " into " << ctx.config_path << " and "
            << plural(p.users.users.size(), "user") << " into " << t.users_db << ".\n";
  return apply_to_running_server(ctx);
}

int cmd_import(const Context& ctx, Source source, ImportOptions o) {
  if (o.conf.empty()) o.conf = source == Source::Samba ? "/etc/samba/smb.conf" : "/etc/ksmbd/ksmbd.conf";
  auto target = load_target(ctx);
  if (!target) return fail(target.error());
  auto cfg = import::plan_config(o.conf);
  if (!cfg) return fail(kExitNotFound, cfg.error());
  Plan p{std::move(*cfg), {}, "nowhere (--no-users)"};
  if (!o.no_users) p.users = read_users(source, o, p.users_source);
  check_against_ringsmb(p, config::ConfigEditor(target->config_text), target->db);
  print_report(p, source == Source::Samba ? "Samba" : "ksmbd", o.conf);
  if (!o.apply) {
    std::cout << "\nDry run: nothing was changed. Run again with --apply to import "
              << plural(p.config.shares.size(), "share") << ", " << plural(p.config.global.size(), "global setting")
              << " and " << plural(p.users.users.size(), "user") << ".\n";
    return kExitOk;
  }
  return apply(ctx, p, *target);
}

void add_import_source(CLI::App& parent, Context& ctx, Source source) {
  bool samba = source == Source::Samba;
  auto o = std::make_shared<ImportOptions>();
  auto* sub = parent.add_subcommand(
      samba ? "samba" : "ksmbd",
      samba ? "Import shares from smb.conf and users with their NT hashes from Samba's passdb (pdbedit -L -w)"
            : "Import shares from ksmbd.conf and users with their NT hashes from ksmbdpwd.db");
  sub->add_option(samba ? "SMB.CONF" : "KSMBD.CONF", o->conf,
                  samba ? "Samba's configuration (default: /etc/samba/smb.conf)"
                        : "ksmbd's configuration (default: /etc/ksmbd/ksmbd.conf)");
  if (samba) {
    sub->add_option("--pdbedit-output", o->pdbedit_output,
                    "Read users from this saved 'pdbedit -L -w' output ('-': stdin) instead of running pdbedit");
    sub->add_option("--pdbedit", o->pdbedit, "The pdbedit program")->capture_default_str();
  } else {
    sub->add_option("--pwddb", o->pwddb, "ksmbd's user database")->capture_default_str();
  }
  sub->add_flag("--no-users", o->no_users, "Import shares and settings only");
  sub->add_flag("--apply", o->apply, "Write ringsmb.conf and the users db (default: a dry run that only reports)");
  sub->callback([&ctx, o, source] { ctx.exit_code = cmd_import(ctx, source, *o); });
}

}  // namespace

void add_import_commands(CLI::App& app, Context& ctx) {
  auto* imp = app.add_subcommand("import", "Bring shares and users (passwords kept) from Samba or ksmbd");
  imp->require_subcommand(1);
  add_import_source(*imp, ctx, Source::Samba);
  add_import_source(*imp, ctx, Source::Ksmbd);
}

}  // namespace ringsmb::ctl
