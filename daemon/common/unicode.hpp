// UTF-8 and UTF-16LE, the one codec of the project: SMB puts names on the
// wire in UTF-16LE, Linux keeps them in (usually) UTF-8. Strict functions
// refuse what RFC 3629 forbids; the lenient ones put U+FFFD in place of each
// bad byte, since a Linux name need not be UTF-8 and must still be shown.
#pragma once

#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace ringsmb::unicode {

inline constexpr char32_t kReplacement = 0xFFFD;
inline constexpr char32_t kMaxCodePoint = 0x10FFFF;

inline bool is_surrogate(char32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// 'A'-'Z' to 'a'-'z', every other byte as it is: how SMB compares the
// ASCII names it defines (stream types, the quota file), whatever the locale.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + 32) : c; }

// Decodes the sequence at s[i] into cp and advances i; false (i unchanged)
// for overlong forms, surrogates, > U+10FFFF and truncated sequences.
bool decode_utf8(std::string_view s, size_t& i, char32_t& cp);

// Lenient: an invalid sequence yields kReplacement and consumes one byte,
// so decoding always makes progress.
char32_t next_code_point(std::string_view s, size_t& i);

bool is_valid_utf8(std::string_view s);

// Surrogates and values above U+10FFFF are written as kReplacement.
void append_utf8(std::string& out, char32_t cp);

// Strict: false for an odd length or an unpaired surrogate.
bool utf16le_to_utf8(ByteSpan in, std::string& out);

// Lenient (see next_code_point); appends to out.
void utf8_to_utf16le(std::string_view in, Bytes& out);

// Number of UTF-16 code units `s` needs (what Windows counts as a length).
size_t utf16_length(std::string_view s);

}  // namespace ringsmb::unicode
