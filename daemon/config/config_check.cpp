#include "config/config_check.hpp"

#include <cerrno>
#include <cstring>

#include "common/sid_text.hpp"
#include "config/config_internal.hpp"
#include "config/substitution.hpp"

namespace ringsmb::config {

using namespace detail;

namespace {

struct Checker {
  CheckedConfig& c;
  std::string_view file;
  const SystemView& sys;
  std::optional<std::set<std::string>> smb_users;  // nullopt: the users db could not be read

  // The line KEY (any of its synonyms) was set on for SECTION, else in
  // [global], else the section's header line.
  int line_of(const std::string& section, std::initializer_list<std::string_view> keys, int fallback) const {
    for (const char* where : {section.c_str(), "global"})
      for (const auto& s : c.sources)
        if (iequals(s.section, where))
          for (std::string_view k : keys)
            if (s.key == k) return s.line;
    return fallback;
  }
  void error(int line, std::string_view msg) { c.errors.push_back(cat(file, ":", line, ": ", msg)); }
  void warn(int line, std::string_view msg) { c.warnings.push_back(cat(file, ":", line, ": ", msg)); }

  // Whether the list entry names something that exists; WHY says what is missing.
  bool entry_exists(const std::string& entry, std::string& why) const {
    if (entry.starts_with('&')) {
      why = cat("'", entry, "': NIS netgroups are not supported and never match");
      return false;
    }
    // A domain's SIDs (a PAC's) cannot be looked up here.
    std::string_view bare = entry;
    if (bare.starts_with('@') || bare.starts_with('+')) bare.remove_prefix(1);
    if (parse_sid_text(bare)) return true;
    if (entry.starts_with('@') || entry.starts_with('+')) {
      if (sys.unix_group_exists(entry.substr(1))) return true;
      why = cat("'", entry, "': no Unix group '", entry.substr(1), "'");
      return false;
    }
    if (!smb_users || smb_users->contains(to_lower(entry))) return true;
    if (iequals(entry, c.config.global.guest_account)) return true;  // guests match by that name
    // "DOMAIN\user": a domain account's name as NSS (winbind, sssd) gives it.
    if (entry.find('\\') != std::string::npos && sys.unix_user_exists(entry)) return true;
    why = cat("'", entry, "': no such user in the users db");
    return false;
  }

  void check_list(const ShareConfig& s, const std::vector<std::string>& list, std::string_view what,
                  std::initializer_list<std::string_view> keys, bool none_is_error);
  void check_path(const ShareConfig& s);
  void check_share(const ShareConfig& s);
  void check_global();
};

void Checker::check_list(const ShareConfig& s, const std::vector<std::string>& list, std::string_view what,
                         std::initializer_list<std::string_view> keys, bool none_is_error) {
  if (list.empty()) return;
  int line = line_of(s.name, keys, s.line);
  size_t found = 0;
  for (const auto& entry : list) {
    std::string why;
    // "%S" names a different user at each tree connect: nothing to look up.
    if (has_substitution(entry) || entry_exists(entry, why)) ++found;
    else warn(line, cat("share [", s.name, "]: ", what, ": ", why));
  }
  if (none_is_error && found == 0)
    error(line, cat("share [", s.name, "]: ", what, ": none of the users and groups exists; nobody can connect"));
}

// A path with %U, %S or %H differs per user: the directory it starts
// in (before the first substitution) must exist.
void Checker::check_path(const ShareConfig& s) {
  int path_line = line_of(s.name, {"path"}, s.line);
  std::string dir = s.path;
  if (has_substitution(dir)) {
    dir = dir.substr(0, dir.find('%'));
    dir = dir.substr(0, dir.rfind('/') + 1);
  }
  if (int e = sys.directory_error(dir); e == ENOTDIR)
    error(path_line, cat("share [", s.name, "]: path ", dir, " is not a directory"));
  else if (e != 0)
    error(path_line, cat("share [", s.name, "]: path ", dir, ": ", std::strerror(e)));
}

void Checker::check_share(const ShareConfig& s) {
  check_path(s);
  if (!s.force_user.empty() && !sys.unix_user_exists(s.force_user))
    error(line_of(s.name, {"forceuser"}, s.line),
          cat("share [", s.name, "]: force user: no Unix user '", s.force_user, "'; every tree connect fails"));
  std::string group = s.force_group.starts_with('+') ? s.force_group.substr(1) : s.force_group;
  if (!group.empty() && !sys.unix_group_exists(group))
    error(line_of(s.name, {"forcegroup", "group"}, s.line),
          cat("share [", s.name, "]: force group: no Unix group '", group, "'; every tree connect fails"));
  check_list(s, s.valid_users, "valid users", {"validusers"}, true);
  check_list(s, s.invalid_users, "invalid users", {"invalidusers"}, false);
  check_list(s, s.read_list, "read list", {"readlist"}, false);
  check_list(s, s.write_list, "write list", {"writelist"}, false);
}

void Checker::check_global() {
  const GlobalConfig& g = c.config.global;
  auto users = sys.smb_users(g.users_db);
  int db_line = line_of("global", {"usersdb"}, 1);
  if (users && users->empty()) {
    // A new server: the names in the file are the users still to be added,
    // not mistakes, so they are not checked.
    warn(db_line, cat("users db ", g.users_db, " has no users yet (ringsmbctl user add NAME); user names are not checked"));
  } else if (users) {
    smb_users = std::move(*users);
  } else {
    warn(db_line, cat("users db: ", users.error(), "; user names are not checked"));
  }
  if (int e = sys.directory_error(g.state_directory); e != 0)
    warn(line_of("global", {"statedirectory"}, 1),
         cat("state directory ", g.state_directory, ": ", e == ENOTDIR ? "not a directory" : std::strerror(e)));
  // Guests log in as the guest account: without it, guest access fails.
  bool guests = g.map_to_guest != MapToGuest::Never;
  for (const auto& s : c.config.shares) guests = guests || s.guest_ok;
  if (!sys.unix_user_exists(g.guest_account)) {
    std::string msg = cat("guest account: no Unix user '", g.guest_account, "'");
    int line = line_of("global", {"guestaccount"}, 1);
    if (guests) error(line, msg + "; guest access fails");
    else warn(line, msg);
  }
  // Kerberos half configured: say why tickets will not be accepted.
  if (!g.realm.empty() && !kerberos_keytab(g))
    warn(line_of("global", {"kerberosmethod", "realm"}, 1),
         g.kerberos_method == KerberosMethod::DedicatedKeytab
             ? std::string("kerberos method = dedicated keytab without a dedicated keytab file: Kerberos is off")
             : std::string("realm is set but kerberos method names no keytab (dedicated keytab or system keytab): "
                           "Kerberos is off"));
  for (const auto& admin : g.admin_users) {
    std::string why;
    if (!entry_exists(admin, why)) warn(line_of("global", {"adminusers"}, 1), cat("admin users: ", why));
  }
}

}  // namespace

void check_system(CheckedConfig& c, std::string_view file, const SystemView& sys) {
  Checker k{c, file, sys, std::nullopt};
  k.check_global();
  for (const auto& s : c.config.shares) k.check_share(s);
  sort_by_line(c.errors);
  sort_by_line(c.warnings);
}

}  // namespace ringsmb::config
