// Code-point level helpers shared by the path, wildcard and name-index code.
// Internal to the vfs layer.
#pragma once

#include <string>
#include <string_view>

namespace ringsmb::vfs::unicode {

// What undecodable input turns into. Linux names need not be UTF-8; such a
// name is shown to clients with U+FFFD in place of each bad byte.
inline constexpr char32_t kReplacement = 0xFFFD;
inline constexpr char32_t kMaxCodePoint = 0x10FFFF;

inline bool is_surrogate(char32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// Decodes the code point starting at s[i] and advances i past it. An invalid
// or overlong sequence (or an encoded surrogate) yields kReplacement and
// consumes one byte, so decoding always makes progress.
char32_t next_code_point(std::string_view s, size_t& i);

// Strict variant for validating names: false on any invalid sequence.
bool is_valid_utf8(std::string_view s);

void append_utf8(std::string& out, char32_t cp);

// Simple (one-to-one) case folding towards lower case for ASCII, Latin-1,
// Latin Extended-A, Greek and Cyrillic; everything else maps to itself.
char32_t fold_code_point(char32_t cp);

// Number of UTF-16 code units `s` needs (what Windows counts as a length).
size_t utf16_length(std::string_view s);

}  // namespace ringsmb::vfs::unicode
