// "veto files": names matching one of the share's patterns are neither
// listed nor opened (Samba's meaning). Patterns use '*' and '?', and compare
// case-insensitively unless the share is case sensitive.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ringsmb::vfs {

// True when the single name `leaf` matches one of the patterns.
bool is_vetoed_name(const std::vector<std::string>& patterns, std::string_view leaf, bool case_sensitive);

// True when any component of the '/'-separated relative path is vetoed: a
// file inside a vetoed directory is as unreachable as the directory.
bool is_vetoed_path(const std::vector<std::string>& patterns, std::string_view path, bool case_sensitive);

}  // namespace ringsmb::vfs
