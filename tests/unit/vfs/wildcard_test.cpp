#include <catch2/catch.hpp>

#include <string>

#include "vfs/dir_entries.hpp"

using ringsmb::vfs::wildcard_match;

namespace {
bool m(std::string_view p, std::string_view n) { return wildcard_match(p, n, false); }
}  // namespace

TEST_CASE("wildcard: everything patterns", "[vfs]") {
  for (const char* n : {"a", "a.txt", "noext", ".hidden", "a.b.c", ""}) {
    CHECK(m("*", n));
    CHECK(m("*.*", n));
  }
  CHECK(m("<", "noext"));
}

TEST_CASE("wildcard: star and question mark", "[vfs]") {
  CHECK(m("*.txt", "file.txt"));
  CHECK(m("*.txt", "a.b.txt"));
  CHECK(m("*.txt", ".txt"));
  CHECK_FALSE(m("*.txt", "file.txt.bak"));
  CHECK_FALSE(m("*.txt", "filetxt"));
  CHECK(m("a?c", "abc"));
  CHECK(m("a?c", "a.c"));
  CHECK_FALSE(m("a?c", "ac"));
  CHECK_FALSE(m("a?c", "abbc"));
  CHECK(m("a*b*c", "aXXbYYc"));
  CHECK(m("a*b*c", "abc"));
  CHECK_FALSE(m("a*b*c", "acb"));
  CHECK(m("exact", "exact"));
  CHECK_FALSE(m("exact", "exactly"));
  CHECK_FALSE(m("", "x"));
  CHECK(m("*a", "aaa"));
  CHECK(m("**", ""));
}

TEST_CASE("wildcard: case sensitivity", "[vfs]") {
  CHECK(m("*.TXT", "file.txt"));
  CHECK(m("FILE.txt", "file.TXT"));
  CHECK(m("\xC3\x89t\xC3\xA9", "\xC3\xA9T\xC3\x89"));           // Été vs éTÉ
  CHECK(m("\xD0\x9F\xD0\xA0\xD0\x98", "\xD0\xBF\xD1\x80\xD0\xB8"));  // ПРИ vs при
  CHECK(m("\xCE\xA3", "\xCF\x82"));                               // Σ vs final ς
  CHECK_FALSE(wildcard_match("*.TXT", "file.txt", true));
  CHECK(wildcard_match("*.txt", "file.txt", true));
  CHECK_FALSE(wildcard_match("A?c", "abc", true));
}

TEST_CASE("wildcard: DOS wildcards", "[vfs]") {
  // DOS_STAR '<': everything up to the final dot.
  CHECK(m("<.txt", "file.txt"));
  CHECK(m("<.txt", "a.b.txt"));
  CHECK_FALSE(m("<.txt", "file.txt.bak"));
  CHECK(m("<", "a"));
  CHECK_FALSE(m("<", "a.b"));  // cannot consume the final dot
  CHECK(m("<.*", "a.b"));
  CHECK(m("<.<", "a.b.c"));
  CHECK(m("<.<", "a.b"));
  CHECK(m("<.b<", "a.bcd"));    // past the final dot it acts like '*'
  CHECK_FALSE(m("<", ".b"));
  // DOS_QM '>': one character, or nothing at a dot / the end.
  CHECK(m("a>", "ab"));
  CHECK(m("a>", "a"));
  CHECK_FALSE(m("a>", "abc"));
  CHECK(m("a>>>", "ab"));
  CHECK_FALSE(m(">", "."));
  // DOS_DOT '"': a dot, or nothing at the end of the name.
  CHECK(m("abc\"", "abc"));
  CHECK(m("abc\"txt", "abc.txt"));
  CHECK_FALSE(m("abc\"txt", "abcxtxt"));
  // "????????.???" as an old client sends it: any 8.3 name.
  const std::string eight_three = ">>>>>>>>\">>>";
  CHECK(m(eight_three, "readme.txt"));
  CHECK(m(eight_three, "a.c"));
  CHECK(m(eight_three, "noext"));
  CHECK(m(eight_three, "12345678.123"));
  CHECK_FALSE(m(eight_three, "123456789.txt"));
  CHECK_FALSE(m(eight_three, "a.long"));
}

TEST_CASE("wildcard: pathological patterns stay fast", "[vfs]") {
  const std::string name(200, 'a');
  std::string pattern;
  for (int i = 0; i < 100; ++i) pattern += "*a";
  pattern += "b";
  CHECK_FALSE(m(pattern, name));
  CHECK(m(pattern.substr(0, pattern.size() - 1), name));
}
