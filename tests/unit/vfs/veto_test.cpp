#include <catch2/catch.hpp>

#include "vfs/veto.hpp"

using namespace ringsmb::vfs;

TEST_CASE("veto patterns match names", "[vfs][veto]") {
  std::vector<std::string> p{"*.tmp", ".DS_Store", "~$*", "a?c", "My Secret"};
  CHECK(is_vetoed_name(p, "x.tmp", false));
  CHECK(is_vetoed_name(p, "X.TMP", false));
  CHECK_FALSE(is_vetoed_name(p, "X.TMP", true));
  CHECK(is_vetoed_name(p, ".DS_Store", true));
  CHECK(is_vetoed_name(p, "~$report.docx", false));
  CHECK(is_vetoed_name(p, "abc", false));
  CHECK_FALSE(is_vetoed_name(p, "abbc", false));
  CHECK(is_vetoed_name(p, "my secret", false));
  CHECK_FALSE(is_vetoed_name(p, "notes.txt", false));
  CHECK_FALSE(is_vetoed_name(p, "tmp", false));
  // "." and ".." are never vetoed, even by "*" or ".*".
  std::vector<std::string> all{"*", ".*"};
  CHECK_FALSE(is_vetoed_name(all, ".", false));
  CHECK_FALSE(is_vetoed_name(all, "..", false));
  CHECK_FALSE(is_vetoed_name({}, "x.tmp", false));
}

TEST_CASE("veto applies to every path component", "[vfs][veto]") {
  std::vector<std::string> p{"private", "*.bak"};
  CHECK(is_vetoed_path(p, "private", false));
  CHECK(is_vetoed_path(p, "a/Private/b.txt", false));
  CHECK(is_vetoed_path(p, "a/b/c.bak", false));
  CHECK_FALSE(is_vetoed_path(p, "a/privately/b.txt", false));
  CHECK_FALSE(is_vetoed_path(p, "", false));
  CHECK_FALSE(is_vetoed_path({}, "private", false));
}
