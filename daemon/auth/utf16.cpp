#include "auth/utf16.hpp"

#include <vector>

namespace ringsmb::auth::detail {
namespace {

// Decodes UTF-8 into code points; nullopt if malformed.
std::optional<std::vector<char32_t>> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return std::nullopt;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

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
  auto cps = decode_utf8(s);
  if (!cps) return std::nullopt;
  Bytes out;
  out.reserve(cps->size() * 2);
  ByteWriter w(out);
  for (char32_t cp : *cps) {
    if (cp >= 0x10000) {
      cp -= 0x10000;
      w.u16(uint16_t(0xD800 + (cp >> 10)));
      w.u16(uint16_t(0xDC00 + (cp & 0x3FF)));
    } else {
      w.u16(uint16_t(cp));
    }
  }
  return out;
}

std::optional<std::string> utf16le_to_utf8(ByteSpan b) {
  if (b.size() % 2) return std::nullopt;
  std::string out;
  out.reserve(b.size());
  for (size_t i = 0; i < b.size(); i += 2) {
    char32_t u = load_le16(&b[i]);
    if (u >= 0xD800 && u <= 0xDBFF) {
      if (i + 4 > b.size()) return std::nullopt;
      char32_t lo = load_le16(&b[i + 2]);
      if (lo < 0xDC00 || lo > 0xDFFF) return std::nullopt;
      u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      i += 2;
    } else if (u >= 0xDC00 && u <= 0xDFFF) {
      return std::nullopt;
    }
    append_utf8(out, u);
  }
  return out;
}

std::string latin1_to_utf8(ByteSpan b) {
  std::string out;
  out.reserve(b.size());
  for (uint8_t c : b) append_utf8(out, c);
  return out;
}

std::string to_upper_utf8(std::string_view s) {
  auto cps = decode_utf8(s);
  if (!cps) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : *cps) append_utf8(out, upper(cp));
  return out;
}

}  // namespace ringsmb::auth::detail
