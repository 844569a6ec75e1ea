// What `ringsmbctl config check` adds to the parser: whether the accounts,
// groups and directories a configuration names exist on this machine. The
// parser accepts a missing share directory (it may be mounted later) and
// any well-formed user name; here they are reported, as errors where a
// share could not work (its path is missing, its force user does not
// exist, none of its valid users exists) and as warnings elsewhere.
//
// The machine is seen through SystemView, so tests give it a fake one.
#pragma once

#include <expected>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace ringsmb::config {

struct SystemView {
  std::function<bool(const std::string&)> unix_user_exists;
  std::function<bool(const std::string&)> unix_group_exists;
  // 0 when PATH is a directory, else an errno (ENOTDIR: it is something else).
  std::function<int(const std::string&)> directory_error;
  // The users db's names (lower case), or why they cannot be read
  // ("permission denied: run as root"). A missing file is an empty set.
  std::function<std::expected<std::set<std::string>, std::string>(const std::string& path)> smb_users;
};

// Appends to C's errors and warnings, each "FILE:LINE: ..." with the line
// where the key was set (the share's header when it was not).
void check_system(CheckedConfig& c, std::string_view file, const SystemView& sys);

}  // namespace ringsmb::config
