// Code-point level helpers shared by the path, wildcard and name-index code.
// Internal to the vfs layer.
#pragma once

#include <string>
#include <string_view>

#include "common/unicode.hpp"

namespace ringsmb::vfs::unicode {

// The codec lives in common/unicode.hpp; these names keep the vfs code short.
using ringsmb::unicode::append_utf8;
using ringsmb::unicode::is_surrogate;
using ringsmb::unicode::is_valid_utf8;
using ringsmb::unicode::kMaxCodePoint;
using ringsmb::unicode::kReplacement;
using ringsmb::unicode::next_code_point;
using ringsmb::unicode::utf16_length;

// Simple (one-to-one) case folding towards lower case for ASCII, Latin-1,
// Latin Extended-A, Greek and Cyrillic; everything else maps to itself.
char32_t fold_code_point(char32_t cp);

}  // namespace ringsmb::vfs::unicode
