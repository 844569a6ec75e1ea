// Hex helpers shared by the crypto and auth unit tests.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace ringsmb::test {

// Parses hex, skipping spaces and newlines so published vectors can be pasted as laid out.
inline Bytes unhex(std::string_view s) {
  Bytes out;
  int hi = -1;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10);
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(uint8_t(hi << 4 | v));
      hi = -1;
    }
  }
  return out;
}

inline std::string hex(ByteSpan b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s.push_back(digits[x >> 4]);
    s.push_back(digits[x & 15]);
  }
  return s;
}

inline std::string lower_hex(std::string_view s) { return hex(unhex(s)); }

}  // namespace ringsmb::test
