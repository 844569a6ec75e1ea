// SIDs as text (see sid_text.hpp).
#include "common/sid_text.hpp"

#include <charconv>

namespace ringsmb {

std::optional<SidParts> parse_sid_text(std::string_view text) {
  if (text.size() < 4 || (text[0] != 'S' && text[0] != 's') || text.substr(1, 3) != "-1-") return std::nullopt;
  text.remove_prefix(4);
  std::vector<uint64_t> parts;
  while (true) {
    size_t dash = text.find('-');
    std::string_view part = text.substr(0, dash);
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    parts.push_back(v);
    if (parts.size() > 1 + kMaxSidSubAuthorities) return std::nullopt;
    if (dash == std::string_view::npos) break;
    text.remove_prefix(dash + 1);
  }
  if (parts.size() < 2 || parts[0] >= (uint64_t(1) << 48)) return std::nullopt;
  SidParts sid;
  sid.authority = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] > UINT32_MAX) return std::nullopt;
    sid.sub.push_back(uint32_t(parts[i]));
  }
  return sid;
}

std::string sid_text(uint64_t authority, std::span<const uint32_t> sub) {
  std::string s = "S-1-" + std::to_string(authority);
  for (uint32_t x : sub) s += "-" + std::to_string(x);
  return s;
}

}  // namespace ringsmb
