// `share add|set|del|list|show`: edit the shares of ringsmb.conf with the
// line-preserving editor (config/config_editor.hpp). Every edit is checked
// by the real parser before the file is replaced, and a running server is
// then asked to reload.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "config/config_dump.hpp"
#include "config/config_editor.hpp"
#include "ctl.hpp"
#include "json_out.hpp"

namespace ringsmb::ctl {
namespace {

struct ShareOptions {
  std::string name;
  std::string path;
  std::string comment;
  std::string valid_users;
  bool read_only = false, writable = false;
  bool guest_ok = false, no_guest_ok = false;
  bool browseable = false, hidden = false;
  std::vector<std::string> options;  // "key = value"
  std::vector<std::string> unset;
  // Which value options were given (an empty --comment "" clears it).
  CLI::Option* path_opt = nullptr;
  CLI::Option* comment_opt = nullptr;
  CLI::Option* valid_users_opt = nullptr;
};

using Edit = std::pair<std::string, std::string>;

bool is_reserved(std::string_view name) {
  for (const char* r : {"global", "homes", "printers", "print$", "ipc$"})
    if (config::normalize_key(name) == config::normalize_key(r)) return true;
  return false;
}

std::expected<std::string, Failure> read_config_text(const std::string& path, bool missing_ok) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT && missing_ok) return std::string();
    int code = errno == EACCES ? kExitPermission : kExitError;
    std::string why = errno == EACCES ? "permission denied: run as root" : std::strerror(errno);
    return std::unexpected(Failure{code, path + ": cannot open: " + why});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The share path must exist when the share is added or moved: a typo
// would otherwise only show as a failing tree connect.
std::expected<std::string, Failure> checked_share_path(const std::string& given) {
  if (given.empty()) return std::unexpected(Failure{kExitUsage, "--path must not be empty"});
  std::string path = std::filesystem::absolute(given).lexically_normal().string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::unexpected(Failure{kExitNotFound, "path '" + path + "' does not exist"});
    return std::unexpected(Failure{kExitError, "path '" + path + "': " + std::strerror(errno)});
  }
  if (!S_ISDIR(st.st_mode)) return std::unexpected(Failure{kExitError, "path '" + path + "' is not a directory"});
  return path;
}

std::expected<Edit, Failure> parse_option(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    return std::unexpected(Failure{kExitUsage, "--option '" + text + "': expected 'key = value'"});
  std::string key = text.substr(0, eq), value = text.substr(eq + 1);
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  };
  key = trim(key);
  if (key.empty()) return std::unexpected(Failure{kExitUsage, "--option '" + text + "': missing key"});
  if (config::normalize_key(key) == "path" || config::normalize_key(key) == "directory")
    return std::unexpected(Failure{kExitUsage, "use --path to set the path"});
  return Edit{key, trim(value)};
}

// The settings the options ask for, in the order they are written.
std::expected<std::vector<Edit>, Failure> requested_edits(const ShareOptions& o) {
  std::vector<Edit> edits;
  if (o.path_opt && o.path_opt->count()) {
    auto p = checked_share_path(o.path);
    if (!p) return std::unexpected(p.error());
    edits.push_back({"path", *p});
  }
  if (o.comment_opt && o.comment_opt->count()) edits.push_back({"comment", o.comment});
  if (o.read_only || o.writable) edits.push_back({"read only", o.read_only ? "yes" : "no"});
  if (o.guest_ok || o.no_guest_ok) edits.push_back({"guest ok", o.guest_ok ? "yes" : "no"});
  if (o.browseable || o.hidden) edits.push_back({"browseable", o.browseable ? "yes" : "no"});
  if (o.valid_users_opt && o.valid_users_opt->count()) edits.push_back({"valid users", o.valid_users});
  for (const auto& opt : o.options) {
    auto e = parse_option(opt);
    if (!e) return std::unexpected(e.error());
    edits.push_back(*e);
  }
  return edits;
}

std::string without_location(const std::string& warning) {
  // "FILE:LINE: text" -> "text": line numbers move when lines are added.
  size_t first = warning.find(": ");
  return first == std::string::npos ? warning : warning.substr(first + 2);
}

// Parses the edited text as the server will, prints the warnings the edit
// introduced, and writes the file.
int validate_and_write(const Context& ctx, const std::string& before, const std::string& after) {
  auto parsed = config::parse_config_text(after, ctx.config_path);
  if (!parsed) return fail(kExitError, "not changed: the result would be invalid: " + parsed.error());
  std::set<std::string> old_warnings;
  if (auto old = config::parse_config_text(before, ctx.config_path))
    for (const auto& w : old->warnings) old_warnings.insert(without_location(w));
  for (const auto& w : parsed->warnings)
    if (!old_warnings.contains(without_location(w))) std::cerr << "warning: " << w << "\n";
  if (auto w = config::write_file_atomically(ctx.config_path, after); !w)
    return fail(w.error().starts_with("permission denied") ? kExitPermission : kExitError, w.error());
  return kExitOk;
}

int cmd_add(const Context& ctx, const ShareOptions& o) {
  if (is_reserved(o.name)) return fail(kExitUsage, "'" + o.name + "' is reserved and cannot be a share name");
  auto edits = requested_edits(o);
  if (!edits) return fail(edits.error());
  auto text = read_config_text(ctx.config_path, true);
  if (!text) return fail(text.error());
  config::ConfigEditor editor(*text);
  if (editor.has_section(o.name)) return fail(kExitExists, "share '" + editor.section_name(o.name) + "' already exists");
  // A new share is writable unless --read-only: what "add a share" means to
  // an admin (Samba's own default is read only).
  if (!o.read_only && !o.writable) edits->insert(edits->begin() + 1, {"read only", "no"});
  if (auto r = editor.add_section(o.name, *edits); !r) return fail(kExitUsage, r.error());
  if (int rc = validate_and_write(ctx, *text, editor.text()); rc != kExitOk) return rc;
  std::cout << "added share '" << o.name << "' (" << o.path << ")\n";
  return apply_to_running_server(ctx);
}

int cmd_set(const Context& ctx, const ShareOptions& o) {
  auto edits = requested_edits(o);
  if (!edits) return fail(edits.error());
  if (edits->empty() && o.unset.empty()) return fail(kExitUsage, "nothing to change (see 'ringsmbctl share set --help')");
  auto text = read_config_text(ctx.config_path, false);
  if (!text) return fail(text.error());
  config::ConfigEditor editor(*text);
  if (is_reserved(o.name) || !editor.has_section(o.name)) return fail(kExitNotFound, "share '" + o.name + "' not found");
  for (const auto& key : o.unset)
    if (!editor.unset(o.name, key)) std::cerr << "warning: share '" << o.name << "' has no '" << key << "' to unset\n";
  for (const auto& [key, value] : *edits)
    if (auto r = editor.set(o.name, key, value); !r) return fail(kExitUsage, r.error());
  if (editor.text() == *text) {
    std::cout << "share '" << editor.section_name(o.name) << "' already has these settings\n";
    return kExitOk;
  }
  if (int rc = validate_and_write(ctx, *text, editor.text()); rc != kExitOk) return rc;
  std::cout << "changed share '" << editor.section_name(o.name) << "'\n";
  return apply_to_running_server(ctx);
}

int cmd_del(const Context& ctx, const ShareOptions& o) {
  auto text = read_config_text(ctx.config_path, false);
  if (!text) return fail(text.error());
  config::ConfigEditor editor(*text);
  if (is_reserved(o.name) || !editor.has_section(o.name)) return fail(kExitNotFound, "share '" + o.name + "' not found");
  std::string name = editor.section_name(o.name);
  if (auto r = editor.remove_section(o.name); !r) return fail(r.error());
  if (int rc = validate_and_write(ctx, *text, editor.text()); rc != kExitOk) return rc;
  std::cout << "deleted share '" << name << "' (its directory is left as it is)\n";
  return apply_to_running_server(ctx);
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Typed fields for what a script filters on, then every effective setting
// as `config show` prints it (keys as documented, values as text).
std::string share_json(const config::ShareConfig& s, const config::GlobalConfig& g) {
  json::Object settings;
  for (const auto& [key, value] : config::share_settings(s, g)) settings.add(key, value);
  return json::Object()
      .add("name", s.name)
      .add("path", s.path)
      .add("comment", s.comment)
      .add("read_only", s.read_only)
      .add("guest_ok", s.guest_ok)
      .add("browseable", s.browseable)
      .add("valid_users", s.valid_users)
      .raw("settings", settings.str())
      .str();
}

int cmd_list(const Context& ctx, bool as_json) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  if (as_json) {
    std::vector<std::string> items;
    for (const auto& s : cfg->shares) items.push_back(share_json(s, cfg->global));
    std::cout << json::document("shares", items);
    return kExitOk;
  }
  size_t wn = 4, wp = 4;
  for (const auto& s : cfg->shares) {
    wn = std::max(wn, s.name.size());
    wp = std::max(wp, s.path.size());
  }
  auto row = [&](const std::string& n, const std::string& p, const std::string& a, const std::string& g,
                 const std::string& c) {
    std::cout << std::left << std::setw(int(wn)) << n << "  " << std::setw(int(wp)) << p << "  " << std::setw(10) << a
              << "  " << std::setw(5) << g << "  " << c << "\n";
  };
  row("NAME", "PATH", "ACCESS", "GUEST", "COMMENT");
  for (const auto& s : cfg->shares) row(s.name, s.path, s.read_only ? "read-only" : "writable", yes_no(s.guest_ok), s.comment);
  return kExitOk;
}

std::string or_none(const std::vector<std::string>& list, const char* none) {
  return list.empty() ? none : config::user_list_text(list);
}

// Everything that decides who may connect and what they may do, then the
// lines as written (config show SHARE prints every setting).
int cmd_show(const Context& ctx, const ShareOptions& o) {
  auto text = read_config_text(ctx.config_path, false);
  if (!text) return fail(text.error());
  auto parsed = config::parse_config_text(*text, ctx.config_path);
  if (!parsed) return fail(parsed.error());
  const config::ShareConfig* s = parsed->config.find_share(o.name);
  if (!s) return fail(kExitNotFound, "share '" + o.name + "' not found");
  const config::GlobalConfig& g = parsed->config.global;
  std::cout << "[" << s->name << "]\n"
            << "  path:           " << s->path << "\n"
            << "  comment:        " << s->comment << "\n"
            << "  read only:      " << yes_no(s->read_only) << "\n"
            << "  guest ok:       " << yes_no(s->guest_ok) << (s->guest_ok ? " (as " + g.guest_account + ")" : "") << "\n"
            << "  browseable:     " << yes_no(s->browseable) << "\n"
            << "  hosts allow:    " << (s->hosts_allow.empty() ? "(any address)" : join(s->hosts_allow)) << "\n"
            << "  hosts deny:     " << (s->hosts_deny.empty() ? "(none)" : join(s->hosts_deny)) << "\n"
            << "  smb3 encryption: " << config::encryption_name(s->smb3_encryption.value_or(g.smb3_encryption))
            << (s->smb3_encryption ? "" : " (from [global])") << "\n"
            << "  valid users:    " << or_none(s->valid_users, "(everyone with an account)") << "\n"
            << "  invalid users:  " << or_none(s->invalid_users, "(none)") << "\n"
            << "  read list:      " << or_none(s->read_list, "(none)") << "\n"
            << "  write list:     " << or_none(s->write_list, "(none)") << "\n"
            << "  force user:     " << (s->force_user.empty() ? "(none: each user's own account)" : s->force_user) << "\n"
            << "  force group:    " << (s->force_group.empty() ? "(none)" : s->force_group) << "\n"
            << "  case sensitive: " << yes_no(s->case_sensitive) << "\n";
  config::ConfigEditor editor(*text);
  std::cout << "As written in " << ctx.config_path << ":\n";
  for (const auto& e : editor.entries(o.name)) std::cout << "  " << e.line << ": " << e.key << " = " << e.value << "\n";
  return kExitOk;
}

// The setting flags shared by add and set.
void add_setting_flags(CLI::App* sub, ShareOptions& o, bool for_add) {
  o.path_opt = sub->add_option("--path", o.path, "Directory to share (must exist)");
  if (for_add) o.path_opt->required();
  o.comment_opt = sub->add_option("--comment", o.comment, "Description shown to clients");
  auto* ro = sub->add_flag("--read-only", o.read_only, "Clients may not write");
  auto* rw = sub->add_flag("--writable", o.writable,
                           for_add ? "Clients with access may write (the default for share add)"
                                   : "Clients with access may write");
  ro->excludes(rw);
  auto* g = sub->add_flag("--guest-ok", o.guest_ok, "Allow guest (passwordless) access");
  auto* ng = sub->add_flag("--no-guest-ok", o.no_guest_ok, "Refuse guest access");
  g->excludes(ng);
  auto* b = sub->add_flag("--browseable", o.browseable, "List the share in browse lists");
  auto* h = sub->add_flag("--hidden", o.hidden, "Leave the share out of browse lists");
  b->excludes(h);
  o.valid_users_opt = sub->add_option("--valid-users", o.valid_users,
                                      "Users and @groups allowed to connect, e.g. 'alice, @staff' (empty: everyone)");
  sub->add_option("--option", o.options, "Any other setting, 'key = value' (repeatable), e.g. 'hosts allow = 10.0.0.0/8'");
}

}  // namespace

void add_share_commands(CLI::App& app, Context& ctx) {
  auto* share = app.add_subcommand("share", "Manage shares (sections of the configuration file)");
  share->require_subcommand(1);
  // One options object per subcommand: each keeps pointers to its own options.
  auto subcommand = [&](const char* name, const char* help) {
    auto o = std::make_shared<ShareOptions>();
    auto* sub = share->add_subcommand(name, help);
    if (std::string_view(name) != "list") sub->add_option("NAME", o->name, "Share name")->required();
    return std::pair{sub, o};
  };

  auto [add, add_o] = subcommand("add", "Add a share; then reload a running server");
  add_setting_flags(add, *add_o, true);
  add->callback([&ctx, o = add_o] { ctx.exit_code = cmd_add(ctx, *o); });

  auto [set, set_o] = subcommand("set", "Change settings of a share; other lines of the file stay as they are");
  add_setting_flags(set, *set_o, false);
  set->add_option("--unset", set_o->unset, "Remove a setting (repeatable), e.g. 'valid users'");
  set->callback([&ctx, o = set_o] { ctx.exit_code = cmd_set(ctx, *o); });

  auto [del, del_o] = subcommand("del", "Remove a share from the configuration (the directory is kept)");
  del->callback([&ctx, o = del_o] { ctx.exit_code = cmd_del(ctx, *o); });

  auto [list, list_o] = subcommand("list", "List the shares");
  auto list_json = std::make_shared<bool>(false);
  list->add_flag("--json", *list_json, "Print JSON: every share with its effective settings (ringsmbctl(8))");
  list->callback([&ctx, list_json] { ctx.exit_code = cmd_list(ctx, *list_json); });

  auto [show, show_o] = subcommand("show", "Show a share's settings and its lines in the file");
  show->callback([&ctx, o = show_o] { ctx.exit_code = cmd_show(ctx, *o); });
}

}  // namespace ringsmb::ctl
