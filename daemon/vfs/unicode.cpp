// UTF-8 / UTF-16LE conversion and simple case folding.
#include "vfs/unicode.hpp"

#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::vfs {
namespace unicode {
namespace {

// Decodes one sequence strictly; returns false for anything RFC 3629 forbids
// (overlong forms, surrogates, > U+10FFFF, truncated sequences).
bool decode_strict(std::string_view s, size_t& i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    cp = b0;
    ++i;
    return true;
  }
  size_t len;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
  else return false;
  if (s.size() - i < len) return false;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > kMaxCodePoint || is_surrogate(cp)) return false;
  i += len;
  return true;
}

// Latin Extended-A alternates upper/lower in pairs, but the parity flips
// at U+0139 and U+0179 and a few code points have no partner.
char32_t fold_latin_ext_a(char32_t cp) {
  if (cp == 0x0130 || cp == 0x0131 || cp == 0x0138 || cp == 0x0149 || cp == 0x017F) return cp;
  if (cp == 0x0178) return 0x00FF;  // Ÿ's lower case lives in Latin-1
  const bool even_upper = (cp < 0x0139) || (cp >= 0x014A && cp < 0x0179);
  const bool is_upper = even_upper ? (cp % 2 == 0) : (cp % 2 == 1);
  return is_upper ? cp + 1 : cp;
}

char32_t fold_greek(char32_t cp) {
  if (cp >= 0x0391 && cp <= 0x03A9 && cp != 0x03A2) return cp + 0x20;
  switch (cp) {
    case 0x0386: return 0x03AC;
    case 0x0388: case 0x0389: case 0x038A: return cp + 0x25;
    case 0x038C: return 0x03CC;
    case 0x038E: case 0x038F: return cp + 0x3F;
    case 0x03C2: return 0x03C3;  // final sigma folds with sigma
    default: return cp;
  }
}

char32_t fold_cyrillic(char32_t cp) {
  if (cp >= 0x0400 && cp <= 0x040F) return cp + 0x50;
  if (cp >= 0x0410 && cp <= 0x042F) return cp + 0x20;
  if (cp == 0x04C0) return 0x04CF;
  const bool even_pairs = (cp >= 0x0460 && cp <= 0x0481) || (cp >= 0x048A && cp <= 0x04BF) ||
                          (cp >= 0x04D0 && cp <= 0x052F);
  if (even_pairs) return cp % 2 == 0 ? cp + 1 : cp;
  if (cp >= 0x04C1 && cp <= 0x04CE) return cp % 2 == 1 ? cp + 1 : cp;
  return cp;
}

}  // namespace

char32_t next_code_point(std::string_view s, size_t& i) {
  char32_t cp;
  if (decode_strict(s, i, cp)) return cp;
  ++i;
  return kReplacement;
}

bool is_valid_utf8(std::string_view s) {
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    if (!decode_strict(s, i, cp)) return false;
  }
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp > kMaxCodePoint || is_surrogate(cp)) cp = kReplacement;
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

char32_t fold_code_point(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 0x20 : cp;
  if (cp < 0x100) return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 0x20 : cp;
  if (cp < 0x180) return fold_latin_ext_a(cp);
  if (cp >= 0x0370 && cp < 0x0400) return fold_greek(cp);
  if (cp >= 0x0400 && cp < 0x0530) return fold_cyrillic(cp);
  return cp;
}

size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) n += next_code_point(s, i) >= 0x10000 ? 2 : 1;
  return n;
}

}  // namespace unicode

std::string fold_case(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    // ASCII fast path: most names are plain ASCII.
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out.push_back(char(c >= 'A' && c <= 'Z' ? c + 0x20 : c));
      ++i;
      continue;
    }
    unicode::append_utf8(out, unicode::fold_code_point(unicode::next_code_point(utf8, i)));
  }
  return out;
}

bool utf16le_to_utf8(ByteSpan in, std::string& out) {
  out.clear();
  if (in.size() % 2 != 0) return false;
  out.reserve(in.size());
  const size_t units = in.size() / 2;
  for (size_t k = 0; k < units; ++k) {
    char32_t cp = load_le16(&in[2 * k]);
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // low surrogate without a high one
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (k + 1 >= units) return false;
      const char32_t lo = load_le16(&in[2 * (k + 1)]);
      if (lo < 0xDC00 || lo > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      ++k;
    }
    unicode::append_utf8(out, cp);
  }
  return true;
}

void utf8_to_utf16le(std::string_view in, Bytes& out) {
  ByteWriter w(out);
  for (size_t i = 0; i < in.size();) {
    const char32_t cp = unicode::next_code_point(in, i);
    if (cp < 0x10000) {
      w.u16(uint16_t(cp));
    } else {
      const char32_t v = cp - 0x10000;
      w.u16(uint16_t(0xD800 + (v >> 10)));
      w.u16(uint16_t(0xDC00 + (v & 0x3FF)));
    }
  }
}

Bytes utf8_to_utf16le(std::string_view in) {
  Bytes out;
  out.reserve(in.size() * 2);
  utf8_to_utf16le(in, out);
  return out;
}

}  // namespace ringsmb::vfs
