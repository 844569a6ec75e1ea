// Samba's %-substitutions that ringsmb expands: %U (the session's user
// name), %S (the share's name as the client asked for it; a home share's
// is its user's name) and %H (the home directory of %U's Unix user). The
// control plane expands them at tree connect in the keys listed by
// is_substituted_key; elsewhere a %-token would be taken literally, so the
// parser refuses it (config.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ringsmb::config {

struct Substitutions {
  std::string user;   // %U
  std::string share;  // %S
  std::string home;   // %H; empty: the user has none
};

// TEXT with each %U, %S and %H replaced; any other '%' is kept.
std::string substitute(std::string_view text, const Substitutions& values);

// True when TEXT holds %U, %S or %H.
bool has_substitution(std::string_view text);

// The first "%X" (X a letter) in TEXT that substitute() would leave as it
// is, e.g. "%m"; nullopt when there is none.
std::optional<std::string> unexpanded_token(std::string_view text);

// Share keys (normalized) whose values the control plane expands: path,
// comment, valid users, invalid users, read list, write list,
// recycle:repository.
bool is_substituted_key(std::string_view key);

}  // namespace ringsmb::config
