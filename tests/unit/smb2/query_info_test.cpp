#include <catch2/catch.hpp>

#include <string>

#include "fixture.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint8_t kFile = 1, kFs = 2, kSecurity = 3, kQuota = 4;
constexpr uint8_t kBasic = 4, kStandard = 5, kInternal = 6, kName = 9, kPosition = 14, kAll = 18,
                  kNetworkOpen = 34, kStream = 22, kNormalizedName = 48, kFullEa = 15;
constexpr uint8_t kFsVolume = 1, kFsSize = 3, kFsAttribute = 5, kFsFullSize = 7;

Bytes qi_body(FileId id, uint8_t type, uint8_t cls, uint32_t out_len, uint32_t additional = 0) {
  Body body;
  body.w.u16(41);
  body.w.u8(type);
  body.w.u8(cls);
  body.w.u32(out_len);
  body.w.u16(0);  // InputBufferOffset
  body.w.u16(0);
  body.w.u32(0);  // InputBufferLength
  body.w.u32(additional);
  body.w.u32(0);  // Flags
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u8(0);
  return body.b;
}

ByteSpan data_of(const Response& r) {
  REQUIRE(r.u16(0) == 9);
  REQUIRE(r.u16(2) == 72);
  uint32_t len = r.u32(4);
  REQUIRE(r.body.size() >= 8 + len);
  return ByteSpan(r.body).subspan(8, len);
}

}  // namespace

TEST_CASE("query_info file classes", "[smb2]") {
  Smb2Fixture f;
  f.mkdir("dir");
  f.write_file("dir/file.txt", "0123456789");
  FileId id = f.open_file("dir\\file.txt");

  SECTION("basic") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kBasic, 1024));
    REQUIRE(r.status == NtStatus::Success);
    auto d = data_of(r);
    REQUIRE(d.size() == 40);
    CHECK(load_le32(d.data() + 32) == 0x20);  // ARCHIVE
  }
  SECTION("standard reports delete pending from the file table") {
    f.server.files.set_delete_pending(f.find(id)->node, true);
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kStandard, 24));
    REQUIRE(r.status == NtStatus::Success);
    auto d = data_of(r);
    REQUIRE(d.size() == 24);
    CHECK(load_le64(d.data() + 8) == 10);
    CHECK(d[20] == 1);  // DeletePending
    CHECK(d[21] == 0);  // Directory
    f.server.files.set_delete_pending(f.find(id)->node, false);
  }
  SECTION("name uses backslashes and a leading one") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kName, 1024));
    REQUIRE(r.status == NtStatus::Success);
    auto d = data_of(r);
    std::string name;
    REQUIRE(vfs::utf16le_to_utf8(d.subspan(4, load_le32(d.data())), name));
    CHECK(name == "\\dir\\file.txt");
  }
  SECTION("name truncated: BUFFER_OVERFLOW, FileNameLength keeps the full length") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kName, 8));
    REQUIRE(r.status == NtStatus::BufferOverflow);
    auto d = data_of(r);
    CHECK(d.size() == 8);
    CHECK(load_le32(d.data()) == 26);
  }
  SECTION("all: below sizeof(FILE_ALL_INFORMATION) = 104 mismatch, then overflow until it fits") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kAll, 4096));
    REQUIRE(r.status == NtStatus::Success);
    const uint32_t full = 100 + 26;
    CHECK(data_of(r).size() == full);
    for (uint32_t len = 0; len <= full; ++len) {
      auto x = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kAll, len));
      NtStatus want = len < 104 ? NtStatus::InfoLengthMismatch
                      : len < full ? NtStatus::BufferOverflow
                                   : NtStatus::Success;
      CHECK(x.status == want);
    }
  }
  SECTION("fixed class with a short buffer: INFO_LENGTH_MISMATCH") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kNetworkOpen, 55));
    CHECK(r.status == NtStatus::InfoLengthMismatch);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kInternal, 8)).status ==
          NtStatus::Success);
  }
  SECTION("position reflects the open") {
    f.find(id)->position = 1234;
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kPosition, 8));
    REQUIRE(r.status == NtStatus::Success);
    CHECK(load_le64(data_of(r).data()) == 1234);
  }
  SECTION("stream") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kStream, 1024));
    REQUIRE(r.status == NtStatus::Success);
    CHECK(data_of(r).size() == 24 + 14);
  }
  SECTION("normalized name needs 3.1.1") {
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kNormalizedName, 1024)).status ==
          NtStatus::Success);
    f.conn.dialect = 0x0302;
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kNormalizedName, 1024)).status ==
          NtStatus::NotSupported);
  }
  SECTION("unknown class and EAs") {
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, 200, 1024)).status ==
          NtStatus::InvalidInfoClass);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kFullEa, 1024)).status ==
          NtStatus::EasNotSupported);
  }
  SECTION("access checks") {
    FileId weak = f.open_file("dir\\file.txt", FILE_READ_DATA);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(weak, kFile, kBasic, 1024)).status ==
          NtStatus::AccessDenied);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(weak, kFile, kStandard, 1024)).status ==
          NtStatus::Success);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(weak, kSecurity, 0, 1024, 7)).status ==
          NtStatus::AccessDenied);
  }
}

TEST_CASE("query_info filesystem classes", "[smb2]") {
  Smb2Fixture f;
  FileId root = f.open_dir("");
  SECTION("volume carries the share name and a stable serial") {
    auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsVolume, 1024));
    REQUIRE(r.status == NtStatus::Success);
    auto d = data_of(r);
    CHECK(load_le64(d.data()) == f.server.start_time);
    CHECK(load_le32(d.data() + 12) == 10);  // "share" in UTF-16
    auto r2 = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsVolume, 1024));
    CHECK(load_le32(data_of(r2).data() + 8) == load_le32(d.data() + 8));
    // Windows' minimum is sizeof(FILE_FS_VOLUME_INFORMATION) = 24, not 18.
    auto cut = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsVolume, 24));
    CHECK(cut.status == NtStatus::BufferOverflow);
    CHECK(data_of(cut).size() == 24);
    auto tiny = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsVolume, 23));
    CHECK(tiny.status == NtStatus::InfoLengthMismatch);
  }
  SECTION("sizes and attribute") {
    CHECK(data_of(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsSize, 24))).size() ==
          24);
    CHECK(data_of(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsFullSize, 32)))
              .size() == 32);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsFullSize, 31)).status ==
          NtStatus::InfoLengthMismatch);
    auto a = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, kFsAttribute, 1024));
    REQUIRE(a.status == NtStatus::Success);
    CHECK((load_le32(data_of(a).data()) & 1) == 0);  // not case sensitive
  }
  SECTION("control (quota) and object id") {
    auto c = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, 6, 48));
    REQUIRE(c.status == NtStatus::Success);
    CHECK(data_of(c).size() == 48);
    CHECK(load_le64(data_of(c).data() + 32) == ~0ull);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, 6, 47)).status ==
          NtStatus::InfoLengthMismatch);
    auto o = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, 8, 64));
    REQUIRE(o.status == NtStatus::Success);
    CHECK(data_of(o).size() == 64);
  }
  SECTION("unknown fs class, quota, bad info type") {
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kFs, 99, 1024)).status ==
          NtStatus::InvalidInfoClass);
    // Quota entries come only from the quota index ($Extend\$Quota), not a file's open.
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, kQuota, 0, 1024)).status ==
          NtStatus::InvalidParameter);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(root, 9, 0, 1024)).status ==
          NtStatus::InvalidParameter);
  }
}

TEST_CASE("query_info security descriptor", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  FileId id = f.open_file("f");
  auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kSecurity, 0, 4096, 0x7));
  REQUIRE(r.status == NtStatus::Success);
  auto d = data_of(r);
  REQUIRE(d.size() >= 20);
  CHECK(d[0] == 1);                          // Revision
  CHECK((load_le16(d.data() + 2) & 0x8000));  // self-relative
  auto small = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kSecurity, 0, 16, 0x7));
  CHECK(small.status == NtStatus::BufferTooSmall);
  auto sacl = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kSecurity, 0, 4096, 0x8));
  CHECK(sacl.status == NtStatus::AccessDenied);
}

TEST_CASE("query_info malformed requests", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  FileId id = f.open_file("f");
  SECTION("input buffer outside the message") {
    Bytes b = qi_body(id, kFile, kBasic, 1024);
    store_le16(b.data() + 8, uint16_t(64 + 40));
    store_le32(b.data() + 12, 1000);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("input offset inside the header") {
    Bytes b = qi_body(id, kFile, kBasic, 1024);
    store_le16(b.data() + 8, 4);
    store_le32(b.data() + 12, 4);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("output length above max_trans") {
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kBasic, (1 << 20) + 1)).status ==
          NtStatus::InvalidParameter);
  }
  SECTION("truncated body") {
    Bytes b = qi_body(id, kFile, kBasic, 1024);
    b.resize(30);
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("closed file") {
    CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(FileId{5, 5}, kFile, kBasic, 1024)).status ==
          NtStatus::FileClosed);
  }
}

namespace {

constexpr uint8_t kAlternateName = 21;

std::string alternate_name_of(Smb2Fixture& f, FileId id) {
  auto r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, kFile, kAlternateName, 1024));
  REQUIRE(r.status == NtStatus::Success);
  auto d = data_of(r);
  std::string name;
  REQUIRE(vfs::utf16le_to_utf8(d.subspan(4, load_le32(d.data())), name));
  return name;
}

}  // namespace

// smb2.mangle: the client asks for the short name, deletes the file by it,
// creates it again by it, and deletes it by the long name.
TEST_CASE("query_info AlternateName: an 8.3 name is its own, a short name outlives its file", "[smb2]") {
  Smb2Fixture f;
  f.mkdir("dir");
  f.write_file("dir/a.b", "x");
  f.write_file("dir/torture_search.txt", "x");
  FileId id = f.open_file("dir\\a.b");
  CHECK(alternate_name_of(f, id) == "a.b");
  f.close(id);

  id = f.open_file("dir\\torture_search.txt");
  const std::string short_name = alternate_name_of(f, id);
  f.close(id);
  REQUIRE(short_name.starts_with("TOR~"));
  std::filesystem::remove(f.dir() / "dir/torture_search.txt");
  REQUIRE(f.create("dir\\" + short_name, FILE_ALL_ACCESS, kCreate, kNonDirectoryFile, id) == NtStatus::Success);
  f.close(id);
  CHECK(f.exists("dir/torture_search.txt"));
  CHECK_FALSE(f.exists("dir/" + short_name));
  // Only in that directory: elsewhere the short name is an ordinary new name.
  REQUIRE(f.create(short_name, FILE_ALL_ACCESS, kCreate, kNonDirectoryFile, id) == NtStatus::Success);
  f.close(id);
  CHECK(f.exists(short_name));
}
