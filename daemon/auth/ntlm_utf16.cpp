#include "auth/ntlm_utf16.hpp"

#include "common/unicode.hpp"

namespace ringsmb::auth::detail {
namespace {

char32_t upper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 0x20;
  if (c == 0xB5) return 0x39C;  // MICRO SIGN -> GREEK CAPITAL MU
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;
  if (c == 0xFF) return 0x178;
  // Latin Extended-A pairs: capital even, small odd, except the 0x138-0x148
  // and 0x179-0x17E runs where capital is odd.
  if (c >= 0x100 && c <= 0x137 && (c & 1) && c != 0x131) return c - 1;  // not dotless i
  if (c >= 0x139 && c <= 0x148 && !(c & 1)) return c - 1;
  if (c >= 0x14A && c <= 0x177 && (c & 1)) return c - 1;
  if (c >= 0x179 && c <= 0x17E && !(c & 1)) return c - 1;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 0x20;  // Greek
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;                // Cyrillic
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return c;
}

}  // namespace

std::optional<Bytes> utf8_to_utf16le(std::string_view s) {
  if (!unicode::is_valid_utf8(s)) return std::nullopt;
  Bytes out;
  out.reserve(s.size() * 2);
  unicode::utf8_to_utf16le(s, out);
  return out;
}

std::optional<std::string> utf16le_to_utf8(ByteSpan b) {
  std::string out;
  if (!unicode::utf16le_to_utf8(b, out)) return std::nullopt;
  return out;
}

std::string latin1_to_utf8(ByteSpan b) {
  std::string out;
  out.reserve(b.size());
  for (uint8_t c : b) unicode::append_utf8(out, c);
  return out;
}

std::string to_upper_utf8(std::string_view s) {
  if (!unicode::is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) unicode::append_utf8(out, upper(unicode::next_code_point(s, i)));
  return out;
}

}  // namespace ringsmb::auth::detail
