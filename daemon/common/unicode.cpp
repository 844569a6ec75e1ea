#include "common/unicode.hpp"

namespace ringsmb::unicode {

bool decode_utf8(std::string_view s, size_t& i, char32_t& cp) {
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

char32_t next_code_point(std::string_view s, size_t& i) {
  char32_t cp;
  if (decode_utf8(s, i, cp)) return cp;
  ++i;
  return kReplacement;
}

bool is_valid_utf8(std::string_view s) {
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    if (!decode_utf8(s, i, cp)) return false;
  }
  return true;
}

namespace {

// Writes the UTF-8 of CP (a code point that is not a surrogate, at most
// U+10FFFF) at P, 1 to 4 bytes; returns the end.
char* put_utf8(char* p, char32_t cp) {
  if (cp < 0x80) {
    *p++ = char(cp);
    return p;
  }
  if (cp < 0x800) {
    *p++ = char(0xC0 | (cp >> 6));
  } else if (cp < 0x10000) {
    *p++ = char(0xE0 | (cp >> 12));
    *p++ = char(0x80 | ((cp >> 6) & 0x3F));
  } else {
    *p++ = char(0xF0 | (cp >> 18));
    *p++ = char(0x80 | ((cp >> 12) & 0x3F));
    *p++ = char(0x80 | ((cp >> 6) & 0x3F));
  }
  *p++ = char(0x80 | (cp & 0x3F));
  return p;
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) {
  if (cp > kMaxCodePoint || is_surrogate(cp)) cp = kReplacement;
  char buf[4];
  out.append(buf, put_utf8(buf, cp));
}

namespace {

// Writes the UTF-8 of `units` UTF-16LE code units at `in` to `p` (room for
// 3 bytes a unit: a BMP code point takes at most 3, a surrogate pair's 4
// bytes stand for two units); the bytes written, or -1 for an unpaired
// surrogate. ASCII, what nearly every name is, takes one store a unit.
ptrdiff_t utf16le_units_to_utf8(const uint8_t* in, size_t units, char* p) {
  char* const start = p;
  for (size_t k = 0; k < units; ++k) {
    char32_t cp = load_le16(in + 2 * k);
    if (cp < 0x80) {
      *p++ = char(cp);
      continue;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) return -1;  // low surrogate without a high one
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (k + 1 >= units) return -1;
      const char32_t lo = load_le16(in + 2 * (k + 1));
      if (lo < 0xDC00 || lo > 0xDFFF) return -1;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      ++k;
    }
    p = put_utf8(p, cp);
  }
  return p - start;
}

// The UTF-8 bytes of `units` UTF-16 units, at most: 1 for ASCII, 2 below
// U+0800, 3 for the rest (a surrogate pair's 4 bytes stand for two units).
// Exact for a name without surrogates, so a short one stays in the
// string's own storage instead of a heap buffer of 3 bytes a unit.
size_t utf8_bound(const uint8_t* in, size_t units) {
  size_t n = 0;
  for (size_t k = 0; k < units; ++k) {
    const uint16_t u = load_le16(in + 2 * k);
    n += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
  }
  return n;
}

}  // namespace

bool utf16le_to_utf8(ByteSpan in, std::string& out) {
  out.clear();
  if (in.size() % 2 != 0) return false;
  const size_t units = in.size() / 2;
  ptrdiff_t n = 0;
  out.resize_and_overwrite(utf8_bound(in.data(), units), [&](char* p, size_t) {
    n = utf16le_units_to_utf8(in.data(), units, p);
    return n < 0 ? size_t(0) : size_t(n);
  });
  return n >= 0;
}

void utf8_to_utf16le(std::string_view in, Bytes& out) {
  ByteWriter w(out);
  for (size_t i = 0; i < in.size();) {
    const char32_t cp = next_code_point(in, i);
    if (cp < 0x10000) {
      w.u16(uint16_t(cp));
    } else {
      const char32_t v = cp - 0x10000;
      w.u16(uint16_t(0xD800 + (v >> 10)));
      w.u16(uint16_t(0xDC00 + (v & 0x3FF)));
    }
  }
}

size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) n += next_code_point(s, i) >= 0x10000 ? 2 : 1;
  return n;
}

}  // namespace ringsmb::unicode
