// Simple case folding for names (the codec itself is common/unicode).
#include "vfs/codepoints.hpp"

#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::vfs {
namespace unicode {
namespace {

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

char32_t fold_code_point(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 0x20 : cp;
  if (cp < 0x100) return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 0x20 : cp;
  if (cp < 0x180) return fold_latin_ext_a(cp);
  if (cp >= 0x0370 && cp < 0x0400) return fold_greek(cp);
  if (cp >= 0x0400 && cp < 0x0530) return fold_cyrillic(cp);
  return cp;
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

Bytes utf8_to_utf16le(std::string_view in) {
  Bytes out;
  out.reserve(in.size() * 2);
  ringsmb::unicode::utf8_to_utf16le(in, out);
  return out;
}

}  // namespace ringsmb::vfs
