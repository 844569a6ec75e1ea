#include <catch2/catch.hpp>

#include "common/unicode.hpp"

using namespace ringsmb;

TEST_CASE("unicode: strict and lenient decoding of bad UTF-8", "[unicode]") {
  CHECK(unicode::is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  CHECK_FALSE(unicode::is_valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(unicode::is_valid_utf8("\xED\xA0\x80"));      // encoded surrogate
  CHECK_FALSE(unicode::is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(unicode::is_valid_utf8("\xE2\x82"));          // truncated
  Bytes out;
  unicode::utf8_to_utf16le("a\xFF" "b", out);  // one bad byte: one U+FFFD
  CHECK(out == Bytes{'a', 0, 0xFD, 0xFF, 'b', 0});
}

TEST_CASE("unicode: UTF-16LE round trip and unpaired surrogates", "[unicode]") {
  Bytes u16;
  unicode::utf8_to_utf16le("x\xF0\x9F\x98\x80", u16);  // U+1F600 becomes a pair
  CHECK(u16 == Bytes{'x', 0, 0x3D, 0xD8, 0x00, 0xDE});
  std::string back;
  REQUIRE(unicode::utf16le_to_utf8(u16, back));
  CHECK(back == "x\xF0\x9F\x98\x80");
  CHECK(unicode::utf16_length(back) == 3);
  CHECK_FALSE(unicode::utf16le_to_utf8(Bytes{0x3D, 0xD8}, back));        // lone high surrogate
  CHECK_FALSE(unicode::utf16le_to_utf8(Bytes{0x00, 0xDE, 'a', 0}, back));  // lone low surrogate
  CHECK_FALSE(unicode::utf16le_to_utf8(Bytes{'a'}, back));                 // odd length
}
