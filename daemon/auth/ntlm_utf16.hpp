// Strict UTF-8 <-> UTF-16LE for NTLM strings and hashes, on top of the
// common codec (common/unicode.hpp): a malformed user name or password is an
// error here, never a replacement character.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace ringsmb::auth::detail {

// nullopt for invalid UTF-8 (overlong forms, surrogates, > U+10FFFF).
std::optional<Bytes> utf8_to_utf16le(std::string_view s);
// nullopt for odd lengths or unpaired surrogates.
std::optional<std::string> utf16le_to_utf8(ByteSpan b);
// OEM strings (NTLMSSP without UNICODE): taken as Latin-1, since the
// client's code page is unknown; ASCII, the only case seen in practice, is
// exact.
std::string latin1_to_utf8(ByteSpan b);
// Upper-cases the way NTOWFv2 needs it (MS-NLMP 3.3.2 Uppercase(User)):
// ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic, the ranges user names
// actually use. Invalid UTF-8 is returned unchanged.
std::string to_upper_utf8(std::string_view s);

}  // namespace ringsmb::auth::detail
