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

TEST_CASE("unicode: UTF-16LE to UTF-8 of every BMP code point and a pair among ASCII", "[unicode]") {
  // Each width (1, 2 and 3 bytes) at its edges and everywhere between, as the
  // UTF-8 decoder reads it back.
  for (char32_t cp = 1; cp < 0x10000; ++cp) {
    if (unicode::is_surrogate(cp)) continue;
    Bytes u16{'a', 0, uint8_t(cp), uint8_t(cp >> 8), 'b', 0};
    std::string s;
    REQUIRE(unicode::utf16le_to_utf8(u16, s));
    size_t i = 1;
    char32_t back = 0;
    REQUIRE(s.size() >= 3);
    REQUIRE(unicode::decode_utf8(s, i, back));
    CHECK(back == cp);
    CHECK(s.front() == 'a');
    CHECK(s.back() == 'b');
    CHECK(i == s.size() - 1);
  }
  std::string s;
  REQUIRE(unicode::utf16le_to_utf8(Bytes{'a', 0, 0xFF, 0xDB, 0xFF, 0xDF, 'b', 0}, s));  // U+10FFFF
  CHECK(s == "a\xF4\x8F\xBF\xBF" "b");
  REQUIRE(unicode::utf16le_to_utf8(Bytes{}, s));
  CHECK(s.empty());
  CHECK_FALSE(unicode::utf16le_to_utf8(Bytes{'a', 0, 0x3D, 0xD8, 'b', 0}, s));  // a high surrogate before 'b'
}
