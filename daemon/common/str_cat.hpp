// String building without <format> (g++ 12's libstdc++ lacks it):
// cat("a", 1, 'b') == "a1b".
#pragma once

#include <concepts>
#include <string>
#include <string_view>

namespace ringsmb {

inline void append_part(std::string& o, std::string_view s) { o.append(s); }
inline void append_part(std::string& o, char c) { o.push_back(c); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void append_part(std::string& o, T v) {
  o += std::to_string(v);
}
template <typename... Ts>
std::string cat(const Ts&... parts) {
  std::string out;
  (append_part(out, parts), ...);
  return out;
}

}  // namespace ringsmb
