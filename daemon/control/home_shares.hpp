// Which share a tree connect reaches, as Samba decides it: a share of the
// configuration by its name, else a home share made from [homes] for a
// user's name (or for "homes" itself: the caller's own home), with %U, %S
// and %H expanded (config/substitution.hpp).
//
// A user's own home is theirs to reach; another user's home only when
// [homes]'s valid users, expanded, name the caller (e.g. "valid users =
// %S, @staff"); otherwise the name does not exist (BAD_NETWORK_NAME), so
// a share name never tells whether an account exists.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/substitution.hpp"

namespace ringsmb::control {

// How account names become Unix users and home directories; the default
// asks the users database (through the caller) and the passwd database.
struct AccountLookup {
  // The Unix user an SMB account maps to; nullopt: no such account.
  std::function<std::optional<std::string>(const std::string& account)> unix_user_of;
  // pw_dir of a Unix user (getpwnam_r); nullopt: no such user or no home.
  std::function<std::optional<std::string>(const std::string& unix_user)> home_of;
};

// getpwnam_r's pw_dir; nullopt for a missing user, an empty home or "/".
std::optional<std::string> passwd_home_directory(const std::string& unix_user);

// Who connects: the SMB account (empty: anonymous) and its Unix user.
struct Caller {
  std::string account;
  std::string unix_user;
  bool is_guest = false;
};

struct ResolvedShare {
  config::ShareConfig share;  // name, path, lists and recycle repository expanded
  bool is_home = false;
  bool is_foreign_home = false;  // the home of someone other than the caller
};

ResolvedShare expand_share(const config::ShareConfig& share, const config::Substitutions& values);

// nullopt: BAD_NETWORK_NAME (no such share, no such user, no home).
std::optional<ResolvedShare> resolve_share(const config::Config& cfg, std::string_view requested, const Caller& caller,
                                           const AccountLookup& lookup);

// The name of CALLER's own home share when [homes] gives them one (for the
// share list), else empty.
std::string own_home_share(const config::Config& cfg, const Caller& caller, const AccountLookup& lookup);

}  // namespace ringsmb::control
