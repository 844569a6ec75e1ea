#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint8_t kDirectoryInfo = 1, kFullDirectoryInfo = 2, kBothDirectoryInfo = 3, kIdBothDirectoryInfo = 37,
                  kIdFullDirectoryInfo = 38, kNamesInfo = 12;
constexpr uint8_t kRestart = 0x1, kSingle = 0x2, kReopen = 0x10;

Bytes query_body(FileId id, uint8_t cls, uint8_t flags, std::string_view pattern, uint32_t out_len) {
  Body body;
  Bytes name = u16le(pattern);
  body.w.u16(33);
  body.w.u8(cls);
  body.w.u8(flags);
  body.w.u32(0);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u16(uint16_t(wire::kHeaderSize + 32));
  body.w.u16(uint16_t(name.size()));
  body.w.u32(out_len);
  body.w.bytes(name);
  if (name.empty()) body.w.u8(0);
  return body.b;
}

struct Entry {
  std::string name;
  uint32_t attributes;
  uint64_t eof;
};

// Walks the NextEntryOffset chain of a response.
std::vector<Entry> entries(const Response& r, uint8_t cls) {
  std::vector<Entry> out;
  REQUIRE(r.u16(0) == 9);
  REQUIRE(r.u16(2) == 72);
  uint32_t len = r.u32(4);
  REQUIRE(r.body.size() >= 8 + len);
  const uint8_t* p = r.body.data() + 8;
  size_t off = 0;
  while (true) {
    REQUIRE(off % 8 == 0);
    const uint8_t* e = p + off;
    size_t name_len_at = cls == kNamesInfo ? 8 : 60;
    size_t name_at = cls == kNamesInfo ? 12 : cls == kDirectoryInfo ? 64 : cls == kFullDirectoryInfo ? 68
                     : cls == kBothDirectoryInfo ? 94 : cls == kIdBothDirectoryInfo ? 104 : 80;
    uint32_t nlen = load_le32(e + name_len_at);
    REQUIRE(off + name_at + nlen <= len);
    std::string name;
    REQUIRE(vfs::utf16le_to_utf8(ByteSpan(e + name_at, nlen), name));
    Entry x{name, cls == kNamesInfo ? 0 : load_le32(e + 56), cls == kNamesInfo ? 0 : load_le64(e + 40)};
    out.push_back(x);
    uint32_t next = load_le32(e);
    if (next == 0) break;
    off += next;
  }
  return out;
}

std::set<std::string> names_of(const std::vector<Entry>& v) {
  std::set<std::string> s;
  for (auto& e : v) s.insert(e.name);
  return s;
}

}  // namespace

TEST_CASE("query_directory lists . .. and files, then NO_MORE_FILES", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "hello");
  f.mkdir("sub");
  FileId dir = f.open_dir("");
  for (uint8_t cls : {kDirectoryInfo, kFullDirectoryInfo, kBothDirectoryInfo, kIdBothDirectoryInfo,
                      kIdFullDirectoryInfo, kNamesInfo}) {
    Response r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                        query_body(dir, cls, kRestart, "*", 65536));
    REQUIRE(r.status == NtStatus::Success);
    auto list = entries(r, cls);
    REQUIRE(list.size() == 4);
    CHECK(list[0].name == ".");
    CHECK(list[1].name == "..");
    CHECK(names_of(list) == std::set<std::string>{".", "..", "a.txt", "sub"});
    if (cls != kNamesInfo) {
      for (auto& e : list) {
        if (e.name == "a.txt") {
          CHECK(e.eof == 5);
          CHECK((e.attributes & 0x10) == 0);
        } else {
          CHECK((e.attributes & 0x10) != 0);
        }
      }
    }
    Response again = f.call(handle_query_directory, wire::Command::QueryDirectory,
                            query_body(dir, cls, 0, "*", 65536));
    CHECK(again.status == NtStatus::NoMoreFiles);
    CHECK(again.body.empty());
  }
}

TEST_CASE("query_directory pattern matching is case-insensitive and NO_SUCH_FILE on no match", "[smb2]") {
  Smb2Fixture f;
  f.write_file("Report.DOC");
  f.write_file("notes.txt");
  FileId dir = f.open_dir("");
  Response r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                      query_body(dir, kBothDirectoryInfo, 0, "report.doc", 65536));
  REQUIRE(r.status == NtStatus::Success);
  auto list = entries(r, kBothDirectoryInfo);
  REQUIRE(list.size() == 1);
  CHECK(list[0].name == "Report.DOC");

  Response none = f.call(handle_query_directory, wire::Command::QueryDirectory,
                         query_body(dir, kBothDirectoryInfo, kRestart, "zzz*", 65536));
  CHECK(none.status == NtStatus::NoSuchFile);
  CHECK(none.body.empty());

  f.tree->share.case_sensitive = true;
  Response cs = f.call(handle_query_directory, wire::Command::QueryDirectory,
                       query_body(dir, kBothDirectoryInfo, kRestart, "report.doc", 65536));
  CHECK(cs.status == NtStatus::NoSuchFile);
}

TEST_CASE("query_directory continues across small buffers without loss or duplicates", "[smb2]") {
  Smb2Fixture f;
  std::set<std::string> want{".", ".."};
  for (int i = 0; i < 300; ++i) {
    std::string n = "file_with_a_longish_name_" + std::to_string(i);
    f.write_file(n);
    want.insert(n);
  }
  FileId dir = f.open_dir("");
  std::set<std::string> got;
  size_t total = 0;
  uint8_t flags = kRestart;
  for (int round = 0; round < 1000; ++round) {
    Response r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                        query_body(dir, kIdBothDirectoryInfo, flags, "*", 1024));
    flags = 0;
    if (r.status == NtStatus::NoMoreFiles) break;
    REQUIRE(r.status == NtStatus::Success);
    REQUIRE(r.u32(4) <= 1024);
    auto list = entries(r, kIdBothDirectoryInfo);
    total += list.size();
    for (auto& e : list) got.insert(e.name);
  }
  CHECK(got == want);
  CHECK(total == want.size());
}

TEST_CASE("query_directory single entry, restart and reopen", "[smb2]") {
  Smb2Fixture f;
  f.write_file("x");
  FileId dir = f.open_dir("");
  Response r1 = f.call(handle_query_directory, wire::Command::QueryDirectory,
                       query_body(dir, kNamesInfo, kSingle, "*", 65536));
  REQUIRE(r1.status == NtStatus::Success);
  CHECK(entries(r1, kNamesInfo).size() == 1);
  CHECK(entries(r1, kNamesInfo)[0].name == ".");
  Response r2 = f.call(handle_query_directory, wire::Command::QueryDirectory,
                       query_body(dir, kNamesInfo, kSingle, "*", 65536));
  CHECK(entries(r2, kNamesInfo)[0].name == "..");
  Response r3 = f.call(handle_query_directory, wire::Command::QueryDirectory,
                       query_body(dir, kNamesInfo, kRestart | kSingle, "*", 65536));
  CHECK(entries(r3, kNamesInfo)[0].name == ".");
  f.write_file("y");  // a new file shows up after REOPEN
  Response r4 = f.call(handle_query_directory, wire::Command::QueryDirectory,
                       query_body(dir, kNamesInfo, kReopen, "*", 65536));
  CHECK(names_of(entries(r4, kNamesInfo)) == std::set<std::string>{".", "..", "x", "y"});
}

TEST_CASE("query_directory '..' of a subdirectory is its parent", "[smb2]") {
  Smb2Fixture f;
  f.mkdir("d1/d2");
  FileId dir = f.open_dir("d1\\d2");
  Response r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                      query_body(dir, kIdFullDirectoryInfo, 0, "*", 65536));
  REQUIRE(r.status == NtStatus::Success);
  // FileId of ".." (offset 72 in FILE_ID_FULL_DIR_INFORMATION) is d1's inode.
  const uint8_t* p = r.body.data() + 8;
  uint32_t next = load_le32(p);
  REQUIRE(next != 0);
  struct stat st;
  REQUIRE(::stat((f.dir() / "d1").c_str(), &st) == 0);
  CHECK(load_le64(p + next + 72) == st.st_ino);
}

TEST_CASE("query_directory errors", "[smb2]") {
  Smb2Fixture f;
  f.write_file("file");
  FileId dir = f.open_dir("");
  FileId file = f.open_file("file");

  SECTION("not a directory") {
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(file, kDirectoryInfo, 0, "*", 65536));
    CHECK(r.status == NtStatus::InvalidParameter);
  }
  SECTION("unknown file id") {
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(FileId{99, 99}, kDirectoryInfo, 0, "*", 65536));
    CHECK(r.status == NtStatus::FileClosed);
  }
  SECTION("invalid info class") {
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory, query_body(dir, 4, 0, "*", 65536));
    CHECK(r.status == NtStatus::InvalidInfoClass);
  }
  SECTION("buffer smaller than the fixed entry") {
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(dir, kBothDirectoryInfo, 0, "*", 50));
    CHECK(r.status == NtStatus::InfoLengthMismatch);
  }
  SECTION("first entry's name does not fit: truncated with BUFFER_OVERFLOW") {
    f.write_file("a_rather_long_file_name.txt");
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(dir, kDirectoryInfo, 0, "a_rather*", 70));
    CHECK(r.status == NtStatus::BufferOverflow);
    CHECK(r.u32(4) == 70);
    CHECK(r.u32(8 + 60) == 6);
  }
  SECTION("output length above max_trans") {
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(dir, kDirectoryInfo, 0, "*", f.server.max_trans + 1));
    CHECK(r.status == NtStatus::InvalidParameter);
  }
  SECTION("no FILE_LIST_DIRECTORY access") {
    FileId d2 = f.open_dir("", FILE_READ_ATTRIBUTES);
    auto r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                    query_body(d2, kDirectoryInfo, 0, "*", 65536));
    CHECK(r.status == NtStatus::AccessDenied);
  }
  SECTION("name offset/length outside the message") {
    Bytes b = query_body(dir, kDirectoryInfo, 0, "*", 65536);
    store_le16(b.data() + 24, 0xFFF0);
    CHECK(f.call(handle_query_directory, wire::Command::QueryDirectory, b).status == NtStatus::InvalidParameter);
    b = query_body(dir, kDirectoryInfo, 0, "*", 65536);
    store_le16(b.data() + 26, 200);
    CHECK(f.call(handle_query_directory, wire::Command::QueryDirectory, b).status == NtStatus::InvalidParameter);
    b = query_body(dir, kDirectoryInfo, 0, "*", 65536);
    store_le16(b.data() + 24, 10);  // inside the header
    CHECK(f.call(handle_query_directory, wire::Command::QueryDirectory, b).status == NtStatus::InvalidParameter);
  }
  SECTION("odd name length") {
    Bytes b = query_body(dir, kDirectoryInfo, 0, "ab", 65536);
    store_le16(b.data() + 26, 3);
    CHECK(f.call(handle_query_directory, wire::Command::QueryDirectory, b).status == NtStatus::InvalidParameter);
  }
  SECTION("truncated body") {
    Bytes b = query_body(dir, kDirectoryInfo, 0, "", 65536);
    b.resize(20);
    CHECK(f.call(handle_query_directory, wire::Command::QueryDirectory, b).status == NtStatus::InvalidParameter);
  }
}

TEST_CASE("query_directory: veto files are invisible, dot files hidden", "[smb2][share-options]") {
  Smb2Fixture f;
  f.write_file("keep.txt");
  f.write_file("junk.TMP");
  f.write_file(".profile");
  f.mkdir("Secret");
  f.tree->share.veto_files = {"*.tmp", "secret"};
  FileId dir = f.open_dir("");
  Response r = f.call(handle_query_directory, wire::Command::QueryDirectory,
                      query_body(dir, kFullDirectoryInfo, kRestart, "*", 65536));
  REQUIRE(r.status == NtStatus::Success);
  auto list = entries(r, kFullDirectoryInfo);
  CHECK(names_of(list) == std::set<std::string>{".", "..", "keep.txt", ".profile"});
  for (auto& e : list) {
    INFO(e.name);
    CHECK(bool(e.attributes & 0x2) == (e.name == ".profile"));  // FILE_ATTRIBUTE_HIDDEN
  }
  // A pattern naming a vetoed file finds nothing.
  Response one = f.call(handle_query_directory, wire::Command::QueryDirectory,
                        query_body(dir, kFullDirectoryInfo, kRestart, "junk.tmp", 65536));
  CHECK(one.status == NtStatus::NoSuchFile);

  // Without hide dot files, .profile is an ordinary file.
  f.tree->share.hide_dot_files = false;
  Response again = f.call(handle_query_directory, wire::Command::QueryDirectory,
                          query_body(dir, kFullDirectoryInfo, kRestart, ".profile", 65536));
  REQUIRE(again.status == NtStatus::Success);
  CHECK((entries(again, kFullDirectoryInfo)[0].attributes & 0x2) == 0);
}
