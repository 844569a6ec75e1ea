#include "control/home_shares.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/log.hpp"

namespace ringsmb::control {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

void expand_list(std::vector<std::string>& list, const config::Substitutions& values) {
  for (auto& entry : list) entry = config::substitute(entry, values);
}

// Values for the caller: %H is the caller's home, whatever share it is.
config::Substitutions values_for(const Caller& caller, std::string share_name, const AccountLookup& lookup) {
  config::Substitutions v;
  v.user = caller.account;
  v.share = std::move(share_name);
  if (!caller.unix_user.empty())
    if (auto home = lookup.home_of(caller.unix_user)) v.home = *home;
  return v;
}

// Samba's own check of a home share's name: the caller's account, or an
// account (else a Unix user) of that name. The Unix user is what owns it.
std::optional<std::string> owner_unix_user(std::string_view name, const Caller& caller, const AccountLookup& lookup) {
  if (iequals(name, caller.account)) return caller.unix_user;
  if (auto u = lookup.unix_user_of(std::string(name))) return u;
  if (lookup.home_of(std::string(name))) return std::string(name);
  return std::nullopt;
}

// "%H" with no home would leave "/rest": a different directory, not none.
bool lacks_home(const config::ShareConfig& s, const config::Substitutions& v) {
  return v.home.empty() &&
         (s.path.find("%H") != std::string::npos || s.recycle.repository.find("%H") != std::string::npos);
}

}  // namespace

std::optional<std::string> passwd_home_directory(const std::string& unix_user) {
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? size_t(hint) : 4096);
  struct passwd pw{};
  struct passwd* res = nullptr;
  int rc;
  while ((rc = getpwnam_r(unix_user.c_str(), &pw, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < (1u << 20))
    buf.resize(buf.size() * 2);
  if (rc != 0 || !res || !pw.pw_dir) return std::nullopt;
  std::string home = pw.pw_dir;
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  if (home.empty() || home == "/" || home.front() != '/') return std::nullopt;
  return home;
}

ResolvedShare expand_share(const config::ShareConfig& share, const config::Substitutions& values) {
  ResolvedShare r{share, false, false};
  config::ShareConfig& s = r.share;
  s.path = config::substitute(s.path, values);
  while (s.path.size() > 1 && s.path.back() == '/') s.path.pop_back();
  s.comment = config::substitute(s.comment, values);
  expand_list(s.valid_users, values);
  expand_list(s.invalid_users, values);
  expand_list(s.read_list, values);
  expand_list(s.write_list, values);
  s.recycle.repository = config::substitute(s.recycle.repository, values);
  return r;
}

std::optional<ResolvedShare> resolve_share(const config::Config& cfg, std::string_view requested, const Caller& caller,
                                           const AccountLookup& lookup) {
  if (const config::ShareConfig* named = cfg.find_share(requested)) {
    auto values = values_for(caller, named->name, lookup);
    if (lacks_home(*named, values)) {
      LOG_WARN("share [%s]: %%H, but user '%s' has no home directory; refused", named->name.c_str(),
               caller.account.c_str());
      return std::nullopt;
    }
    auto r = expand_share(*named, values);
    if (r.share.path.empty() || r.share.path.front() != '/') {
      LOG_WARN("share [%s]: path %s expands to %s for user %s; refused", named->name.c_str(), named->path.c_str(),
               r.share.path.c_str(), caller.account.c_str());
      return std::nullopt;
    }
    return r;
  }
  if (!cfg.homes || caller.account.empty() || caller.is_guest) return std::nullopt;
  std::string name = iequals(requested, "homes") ? caller.account : std::string(requested);
  auto owner = owner_unix_user(name, caller, lookup);
  if (!owner) return std::nullopt;
  auto home = lookup.home_of(*owner);
  if (!home) return std::nullopt;
  config::ShareConfig tmpl = *cfg.homes;
  tmpl.name = name;
  if (tmpl.path.empty()) tmpl.path = *home;
  if (tmpl.comment.empty()) tmpl.comment = "Home directory of " + name;
  auto values = values_for(caller, name, lookup);
  if (lacks_home(tmpl, values)) return std::nullopt;
  auto r = expand_share(tmpl, values);
  r.is_home = true;
  r.is_foreign_home = !iequals(name, caller.account);
  // Another user's home exists for the caller only where valid users name them.
  if (r.is_foreign_home && r.share.valid_users.empty()) return std::nullopt;
  if (r.share.path.empty() || r.share.path.front() != '/') return std::nullopt;
  return r;
}

std::string own_home_share(const config::Config& cfg, const Caller& caller, const AccountLookup& lookup) {
  if (!cfg.homes || caller.account.empty() || caller.is_guest || caller.unix_user.empty()) return "";
  if (cfg.find_share(caller.account)) return "";  // a share of that name wins, as in Samba
  if (!lookup.home_of(caller.unix_user)) return "";
  return caller.account;
}

}  // namespace ringsmb::control
