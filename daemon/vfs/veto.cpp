#include "vfs/veto.hpp"

#include "vfs/dir_entries.hpp"

namespace ringsmb::vfs {

bool is_vetoed_name(const std::vector<std::string>& patterns, std::string_view leaf, bool case_sensitive) {
  if (leaf.empty() || leaf == "." || leaf == "..") return false;
  for (const auto& p : patterns)
    if (wildcard_match(p, leaf, case_sensitive)) return true;
  return false;
}

bool is_vetoed_path(const std::vector<std::string>& patterns, std::string_view path, bool case_sensitive) {
  if (patterns.empty()) return false;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    std::string_view part = path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (is_vetoed_name(patterns, part, case_sensitive)) return true;
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return false;
}

}  // namespace ringsmb::vfs
