// vfs::short_names: which names are 8.3 names, the generated short name
// (deterministic, 8.3, of the documented form) and the lookup by it.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "temp_dir.hpp"
#include "vfs/short_names.hpp"

using namespace ringsmb::vfs;

TEST_CASE("8.3 names: MS-FSCC 2.1.5.2.1, in any case", "[vfs][short_names]") {
  for (const char* ok : {"A", "FILE.TXT", "file.txt", "12345678.123", "A~1.B", "X_Y-Z!.$$$", "NOEXT"})
    CHECK(is_8dot3_name(ok));
  for (const char* bad : {"", ".", "..", "123456789", "a.b.c", "file.text", "a b.txt", "a+b", "a[1].c", "name.",
                          ".hidden", "caf\xc3\xa9", "a\\b", "a:b"})
    CHECK_FALSE(is_8dot3_name(bad));
}

TEST_CASE("short names: none for 8.3 names, a stable generated one otherwise", "[vfs][short_names]") {
  CHECK(short_name_of("FILE.TXT").empty());
  CHECK(short_name_of("file.txt").empty());
  CHECK(short_name_of(".").empty());
  CHECK(short_name_of("..").empty());
  const std::string s = short_name_of("torture_search.txt");
  REQUIRE(s.size() == 12);
  CHECK(s.substr(0, 4) == "TOR~");
  CHECK(s.substr(8) == ".TXT");
  CHECK(is_8dot3_name(s));
  CHECK(looks_like_short_name(s));
  // A function of the name alone, and of its case-folded form.
  CHECK(short_name_of("torture_search.txt") == s);
  CHECK(short_name_of("TORTURE_SEARCH.TXT") == s);
  CHECK(short_name_of("torture_search2.txt") != s);
  // Characters 8.3 cannot hold are dropped; the last extension counts.
  CHECK(short_name_of("a b+c.tar.gz").starts_with("ABC~"));
  CHECK(short_name_of("a b+c.tar.gz").ends_with(".GZ"));
  CHECK(short_name_of("archive.backup").ends_with(".BAC"));
  CHECK(short_name_of("\xc3\xa9\xc3\xa9\xc3\xa9.txt").starts_with("_~"));
  CHECK(short_name_of(".bashrc").starts_with("BAS~"));
  CHECK(short_name_of(".bashrc").find('.') == std::string::npos);
}

TEST_CASE("short names: distinct for distinct names in practice", "[vfs][short_names]") {
  std::set<std::string> seen;
  for (int i = 0; i < 300; ++i) seen.insert(short_name_of("longfilename_" + std::to_string(i) + ".dat"));
  CHECK(seen.size() == 300);
}

TEST_CASE("short names: the generated form only", "[vfs][short_names]") {
  CHECK(looks_like_short_name("TOR~AB12.TXT"));
  CHECK(looks_like_short_name("tor~ab12.txt"));
  CHECK(looks_like_short_name("_~ZZZZ"));
  CHECK_FALSE(looks_like_short_name("PROGRA~1"));   // Windows' own form: not ours
  CHECK_FALSE(looks_like_short_name("TORT~AB12"));  // prefix too long
  CHECK_FALSE(looks_like_short_name("TOR~AB1.TXT"));
  CHECK_FALSE(looks_like_short_name("TOR-AB12.TXT"));
  CHECK_FALSE(looks_like_short_name("torture_search.txt"));
  // A '~' of the name's own in the prefix (Office's "~$" lock files).
  CHECK(looks_like_short_name("~$R~AB12.DOC"));
  CHECK(looks_like_short_name("~~ZZZZ"));
  CHECK_FALSE(looks_like_short_name("~ABCD"));  // no prefix before the '~'
}

// What fuzz_smb_path checks for any bytes: a generated short name is an
// 8.3 name the recognizer takes for one, and its own short name is none.
// Names on disk can hold control characters and invalid UTF-8, which are
// dropped (MS-FSCC 2.1.5.2.1: an 8.3 name is printable ASCII).
TEST_CASE("short names: the recognizer takes every generated name", "[vfs][short_names]") {
  for (std::string_view name : {std::string_view("\n~\n."), std::string_view("~$report.docx"),
                                std::string_view("~~~~~~~~~~"), std::string_view("~.~~~~"),
                                std::string_view("\x01\x02\x03 long.txt"), std::string_view("\xff\xfe~x.\x80" "ab"),
                                std::string_view("a\0b.txt", 7), std::string_view("~ab~cdef.ghij")}) {
    const std::string s = short_name_of(name);
    INFO(s);
    REQUIRE_FALSE(s.empty());
    CHECK(is_8dot3_name(s));
    CHECK(looks_like_short_name(s));
    CHECK(short_name_of(s).empty());
    CHECK(alternate_name(name) == s);
    CHECK(alternate_name(s) == s);
  }
  test::TempDir dir;
  dir.write_file("~$report.docx", "x");
  CHECK(find_by_short_name(dir.fd(), short_name_of("~$report.docx")).value() == "~$report.docx");
}

TEST_CASE("short names: an entry is found by its short name", "[vfs][short_names]") {
  test::TempDir dir;
  dir.write_file("torture_search.txt", "x");
  dir.write_file("other long name.doc", "y");
  dir.write_file("SHORT.TXT", "z");
  const std::string s = short_name_of("torture_search.txt");
  CHECK(find_by_short_name(dir.fd(), s).value() == "torture_search.txt");
  std::string lower;
  for (char c : s) lower += char(tolower(c));
  CHECK(find_by_short_name(dir.fd(), lower).value() == "torture_search.txt");
  CHECK(find_by_short_name(dir.fd(), short_name_of("other long name.doc")).value() == "other long name.doc");
  CHECK_FALSE(find_by_short_name(dir.fd(), "SHORT.TXT"));  // not of the generated form
  CHECK_FALSE(find_by_short_name(dir.fd(), "ZZZ~0000.TXT"));
}

TEST_CASE("short names: the alternate name is the short name, or the 8.3 name itself", "[vfs][short_names]") {
  CHECK(alternate_name("torture_search.txt") == short_name_of("torture_search.txt"));
  CHECK(alternate_name("FILE.TXT") == "FILE.TXT");
  CHECK(alternate_name("a.b") == "a.b");  // its own case, as Samba reports it
  CHECK(alternate_name("A~ABCD") == "A~ABCD");
  CHECK(alternate_name("").empty());
  CHECK(alternate_name(".").empty());
  CHECK(alternate_name("..").empty());
}

TEST_CASE("short names: the memory recalls the long name of a short name it was told", "[vfs][short_names]") {
  ShortNameMemory memory(2);
  const std::string s = short_name_of("torture_search.txt");
  memory.remember("share", "dir", "torture_search.txt");
  CHECK(memory.recall("share", "dir", s).value() == "torture_search.txt");
  std::string lower;
  for (char c : s) lower += char(tolower(c));
  CHECK(memory.recall("share", "dir", lower).value() == "torture_search.txt");
  CHECK_FALSE(memory.recall("share", "", s));       // another directory
  CHECK_FALSE(memory.recall("other", "dir", s));    // another share
  // An 8.3 name has no short name to remember.
  memory.remember("share", "dir", "FILE.TXT");
  CHECK(memory.size() == 1);
  CHECK_FALSE(memory.recall("share", "dir", "FILE.TXT"));
  // The oldest is forgotten first.
  memory.remember("share", "dir", "second long name.txt");
  memory.remember("share", "dir", "third long name.txt");
  CHECK(memory.size() == 2);
  CHECK_FALSE(memory.recall("share", "dir", s));
  CHECK(memory.recall("share", "dir", short_name_of("third long name.txt")).value() == "third long name.txt");
  ShortNameMemory none(0);
  none.remember("share", "dir", "torture_search.txt");
  CHECK(none.size() == 0);
}
