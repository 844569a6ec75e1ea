// The AppleDouble parser (smb2/fruit/appledouble.hpp): "._" files as macOS
// writes them, with the attributes it packs behind the Finder info.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "smb2/fruit/appledouble.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2::fruit;

namespace {

void be16(Bytes& b, size_t at, uint16_t v) { b[at] = uint8_t(v >> 8), b[at + 1] = uint8_t(v); }
void be32(Bytes& b, size_t at, uint32_t v) { store_be32(b.data() + at, v); }

struct Attr {
  std::string name;
  std::string value;
};

// A "._" file the way macOS lays it out: header, Finder info entry at 50
// (32 bytes, padding, ATTR header, attribute entries, their values), then
// the resource fork.
Bytes macos_appledouble(const std::string& finder_info, const std::vector<Attr>& attrs, const std::string& rfork) {
  Bytes b(50 + 32 + 2 + 36, 0);
  be32(b, 0, kAppleDoubleMagic);
  be32(b, 4, kAppleDoubleVersion);
  std::memcpy(b.data() + 8, "Mac OS X        ", 16);
  be16(b, 24, 2);
  std::memcpy(b.data() + 50, finder_info.data(), std::min<size_t>(finder_info.size(), 32));
  size_t at = b.size();
  std::vector<size_t> offset_fields;
  for (const Attr& a : attrs) {
    at = (at + 3) & ~size_t{3};
    b.resize(at + 11 + a.name.size() + 1, 0);
    offset_fields.push_back(at);
    be32(b, at + 4, uint32_t(a.value.size()));
    b[at + 10] = uint8_t(a.name.size() + 1);
    std::memcpy(b.data() + at + 11, a.name.data(), a.name.size());
    at = b.size();
  }
  const size_t data_start = b.size();
  for (size_t i = 0; i < attrs.size(); ++i) {
    be32(b, offset_fields[i], uint32_t(b.size()));
    b.insert(b.end(), attrs[i].value.begin(), attrs[i].value.end());
  }
  const size_t total = b.size();
  be32(b, 84, 0x41545452);
  be32(b, 84 + 8, uint32_t(total));
  be32(b, 84 + 12, uint32_t(data_start));
  be32(b, 84 + 16, uint32_t(total - data_start));
  be16(b, 84 + 34, uint16_t(attrs.size()));
  // entries: Finder info (9) spanning the attributes, resource fork (2) after
  be32(b, 26, kAdEntryFinderInfo);
  be32(b, 30, 50);
  be32(b, 34, uint32_t(total - 50));
  be32(b, 38, kAdEntryResourceFork);
  be32(b, 42, uint32_t(total));
  be32(b, 46, uint32_t(rfork.size()));
  b.insert(b.end(), rfork.begin(), rfork.end());
  return b;
}

}  // namespace

TEST_CASE("appledouble: macOS's ._ file with attributes and a resource fork", "[smb2][fruit]") {
  Bytes b = macos_appledouble("TESTSLOW", {{"com.apple.metadata:_kMDItemUserTags", "tags"}, {"foo:bar", "baz"}},
                              "resource!");
  auto ad = parse_appledouble(b, b.size());
  REQUIRE(ad);
  CHECK(ad->from_macos);
  REQUIRE(ad->finder_info);
  CHECK(std::memcmp(ad->finder_info->data(), "TESTSLOW", 8) == 0);
  REQUIRE(ad->attributes.size() == 2);
  CHECK(ad->attributes[0].name == "com.apple.metadata:_kMDItemUserTags");
  CHECK(ad->attributes[0].value == Bytes{'t', 'a', 'g', 's'});
  CHECK(ad->attributes[1].name == "foo:bar");
  CHECK(ad->attributes[1].value == Bytes{'b', 'a', 'z'});
  CHECK(ad->resource_fork_length == 9);
  CHECK(ad->resource_fork_offset + 9 == b.size());
}

TEST_CASE("appledouble: a resource fork past the end is cut, a bad header refused", "[smb2][fruit]") {
  Bytes b = macos_appledouble("TYPECREA", {}, "0123456789");
  auto cut = parse_appledouble(ByteSpan(b.data(), b.size() - 4), b.size() - 4);
  REQUIRE(cut);
  CHECK(cut->resource_fork_length == 6);

  Bytes bad_magic = b;
  bad_magic[3] ^= 1;
  CHECK_FALSE(parse_appledouble(bad_magic, bad_magic.size()));

  Bytes bad_attr = macos_appledouble("TYPECREA", {{"x", "value"}}, "");
  be32(bad_attr, 84 + 8, 1u << 20);  // total size beyond the file
  CHECK_FALSE(parse_appledouble(bad_attr, bad_attr.size()));

  CHECK_FALSE(parse_appledouble(ByteSpan(b.data(), 20), 20));
}

TEST_CASE("appledouble: no input crashes the parser", "[smb2][fruit]") {
  Bytes b = macos_appledouble("TESTSLOW", {{"a:b", "1"}, {"c", "22"}}, "fork");
  std::mt19937 rng(42);
  for (int i = 0; i < 20000; ++i) {
    Bytes m = b;
    for (int k = 0; k < 4; ++k) m[rng() % m.size()] = uint8_t(rng());
    const size_t len = rng() % (m.size() + 1);
    (void)parse_appledouble(ByteSpan(m.data(), len), len);
  }
}

TEST_CASE("appledouble: the converted form parses to nothing to convert", "[smb2][fruit]") {
  Bytes empty = converted_appledouble(true);
  REQUIRE(empty.size() == kAdConvertedBytes);
  auto ad = parse_appledouble(empty, empty.size());
  REQUIRE(ad);
  CHECK(ad->from_macos);
  REQUIRE(ad->finder_info);
  CHECK(std::all_of(ad->finder_info->begin(), ad->finder_info->end(), [](uint8_t c) { return c == 0; }));
  CHECK(ad->attributes.empty());
  CHECK(ad->resource_fork_length == 0);
}

TEST_CASE("appledouble: attribute names as macOS's stream names", "[smb2][fruit]") {
  CHECK(stream_name_of_attribute("foo:bar") == "foo\xef\x80\xa2" "bar");
  CHECK(stream_name_of_attribute("com.apple.metadata:_kMDItemUserTags") ==
        "com.apple.metadata\xef\x80\xa2_kMDItemUserTags");
  CHECK(stream_name_of_attribute("a*b?") == "a\xef\x80\xa1" "b\xef\x80\xa5");
  CHECK(stream_name_of_attribute("\x01") == "\xef\x80\x81");
  CHECK(stream_name_of_attribute("a/b").empty());
}

TEST_CASE("appledouble: macOS's blank resource fork", "[smb2][fruit]") {
  Bytes blank(kAdBlankResourceForkBytes, 0);
  for (size_t at : {size_t{0}, size_t{256}}) {
    be32(blank, at, 256);
    be32(blank, at + 4, 256);
    be32(blank, at + 12, 30);
  }
  const char text[] = "This resource fork intentionally left blank   ";
  std::memcpy(blank.data() + 16, text, sizeof text - 1);
  be16(blank, 280, 28);
  be16(blank, 282, 30);
  be16(blank, 284, 0xFFFF);
  CHECK(blank_resource_fork(blank));
  blank[100] = 1;
  CHECK_FALSE(blank_resource_fork(blank));
  CHECK_FALSE(blank_resource_fork(Bytes(10, 0)));
}
