#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>

#include "fixture.hpp"
#include "smb2/quota/quota.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

TEST_CASE("create: a name beginning with a separator is INVALID_PARAMETER", "[smb2]") {
  Smb2Fixture f;
  FileId id;
  CHECK(f.create("\\dir", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::InvalidParameter);
  CHECK(f.create("dir\\\\x", FILE_ALL_ACCESS, kOpenIf, 0, id) != NtStatus::Success);  // empty component
  CHECK(f.create("ok.txt", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::Success);
}

TEST_CASE("create: streams and directories (MS-FSA 2.1.5.1)", "[smb2]") {
  Smb2Fixture f;
  f.mkdir("d");
  FileId id;
  constexpr uint32_t kDirectoryFile = 0x1;
  SECTION("a named stream with FILE_DIRECTORY_FILE is NOT_A_DIRECTORY, even when absent") {
    CHECK(f.create("d\\x.txt:s", FILE_ALL_ACCESS, kCreate, kDirectoryFile, id) == NtStatus::NotADirectory);
  }
  SECTION("a directory's $DATA stream: NOT_A_DIRECTORY or FILE_IS_A_DIRECTORY") {
    CHECK(f.create("d::$DATA", FILE_ALL_ACCESS, kOpen, kDirectoryFile, id) == NtStatus::NotADirectory);
    CHECK(f.create("d::$DATA", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::FileIsADirectory);
  }
  SECTION("a file's $DATA stream is the file") {
    f.write_file("f.txt", "x");
    CHECK(f.create("f.txt::$DATA", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::Success);
  }
}

TEST_CASE("create: opens without data or delete access take no part in sharing", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f.txt", "x");
  FileId a, b, c;
  REQUIRE(f.create("f.txt", FILE_READ_ATTRIBUTES, kOpen, 0, a, 0) == NtStatus::Success);
  CHECK(f.create("f.txt", FILE_READ_DATA | FILE_WRITE_DATA, kOpen, 0, b, 0) == NtStatus::Success);
  CHECK(f.create("f.txt", READ_CONTROL | FILE_READ_ATTRIBUTES, kOpen, 0, c, 0) == NtStatus::Success);
  FileId d;
  CHECK(f.create("f.txt", FILE_READ_DATA, kOpen, 0, d, 7) == NtStatus::SharingViolation);  // b shares nothing
}

TEST_CASE("create: an overwrite refused by share modes leaves the data alone", "[smb2]") {
  Smb2Fixture f;
  f.write_file("keep.txt", "precious data");
  FileId reader, writer;
  // The first open shares read only: an overwrite must fail without truncating.
  REQUIRE(f.create("keep.txt", FILE_READ_DATA, kOpen, 0, reader, 1 /* FILE_SHARE_READ */) == NtStatus::Success);
  CHECK(f.create("keep.txt", FILE_WRITE_DATA, kOverwriteIf, 0, writer, 7) == NtStatus::SharingViolation);
  CHECK(std::filesystem::file_size(f.dir() / "keep.txt") == 13);
}

TEST_CASE("create: overwrite empties the file and keeps read access", "[smb2]") {
  Smb2Fixture f;
  f.write_file("old.txt", "old contents");
  FileId id;
  REQUIRE(f.create("old.txt", FILE_READ_DATA | FILE_WRITE_DATA, kOverwriteIf, 0, id, 7) == NtStatus::Success);
  CHECK(std::filesystem::file_size(f.dir() / "old.txt") == 0);
  const state::Open* open = f.find(id);
  REQUIRE(open != nullptr);
  CHECK((fcntl(open->fd.get(), F_GETFL) & O_ACCMODE) == O_RDWR);
}

namespace {

constexpr uint32_t kReadOnly = 0x1, kHidden = 0x2, kArchive = 0x20, kNormal = 0x80;
// CREATE response offsets (MS-SMB2 2.2.14).
constexpr size_t kAllocationAt = 40, kEndOfFileAt = 48, kAttributesAt = 56, kFileIdAt = 64;

// A CREATE (OPEN_IF, every access) of NAME with FileAttributes ATTRS and,
// when DATA is given, one create context "AlSi" holding it.
Bytes create_with(std::string_view name, uint32_t attrs, const Bytes* alloc_data = nullptr) {
  Body body;
  Bytes n = u16le(name);
  body.w.u16(57);
  body.w.u8(0);
  body.w.u8(0);
  body.w.u32(2);
  body.w.zeros(16);
  body.w.u32(FILE_ALL_ACCESS);
  body.w.u32(attrs);
  body.w.u32(kShareAll);
  body.w.u32(kOpenIf);
  body.w.u32(kNonDirectoryFile);
  body.w.u16(uint16_t(wire::kHeaderSize + 56));
  body.w.u16(uint16_t(n.size()));
  const size_t ctx_at = (56 + n.size() + 7) / 8 * 8;
  body.w.u32(alloc_data ? uint32_t(wire::kHeaderSize + ctx_at) : 0);
  body.w.u32(alloc_data ? uint32_t(24 + alloc_data->size()) : 0);
  body.w.bytes(n);
  if (alloc_data) {
    body.w.zeros(ctx_at - body.b.size());
    body.w.u32(0);   // Next
    body.w.u16(16);  // NameOffset
    body.w.u16(4);   // NameLength
    body.w.u16(0);
    body.w.u16(24);  // DataOffset
    body.w.u32(uint32_t(alloc_data->size()));
    body.w.bytes(reinterpret_cast<const uint8_t*>("AlSi"), 4);
    body.w.zeros(4);
    body.w.bytes(*alloc_data);
  }
  return body.b;
}

Bytes u64_bytes(uint64_t v) {
  Bytes b(8);
  store_le64(b.data(), v);
  return b;
}

}  // namespace

TEST_CASE("create: READONLY given at CREATE is kept, the creating open still writes", "[smb2]") {
  Smb2Fixture f;
  Response r = f.call(handle_create, wire::Command::Create, create_with("ro.txt", kReadOnly));
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u32(kAttributesAt) == (kReadOnly | kArchive));
  struct stat st;
  REQUIRE(::stat((f.dir() / "ro.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0222) == 0);
  const state::Open* open = f.find({r.u64(kFileIdAt), r.u64(kFileIdAt + 8)});
  REQUIRE(open != nullptr);
  CHECK(pwrite(open->fd.get(), "x", 1, 0) == 1);
}

TEST_CASE("create: the AllocationSize context reserves space and is reported", "[smb2]") {
  Smb2Fixture f;
  const Bytes size = u64_bytes(4096);
  Response r = f.call(handle_create, wire::Command::Create, create_with("a.bin", kNormal, &size));
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u64(kEndOfFileAt) == 0);
  struct stat st;
  REQUIRE(::stat((f.dir() / "a.bin").c_str(), &st) == 0);
  CHECK(st.st_size == 0);
  if (st.st_blocks == 0) {
    WARN("no fallocate on this filesystem: the size is a hint, not tested");
  } else {
    CHECK(r.u64(kAllocationAt) == 4096);
    CHECK(uint64_t(st.st_blocks) * 512 >= 4096);
  }
  const Bytes short_data(4, 0);
  CHECK(f.call(handle_create, wire::Command::Create, create_with("b.bin", kNormal, &short_data)).status ==
        NtStatus::InvalidParameter);
  CHECK_FALSE(f.exists("b.bin"));
}

TEST_CASE("create: attributes the mode cannot express, on a share without store dos attributes", "[smb2]") {
  Smb2Fixture f;
  Response plain = f.call(handle_create, wire::Command::Create, create_with("p.txt", kNormal));
  REQUIRE(plain.status == NtStatus::Success);
  CHECK(plain.u32(kAttributesAt) == kArchive);
  char v[64];
  CHECK(getxattr((f.dir() / "p.txt").c_str(), "trusted.ringsmb.meta", v, sizeof v) < 0);  // no xattr write
  Response hidden = f.call(handle_create, wire::Command::Create, create_with("h.txt", kHidden));
  REQUIRE(hidden.status == NtStatus::Success);
  if (getxattr((f.dir() / "h.txt").c_str(), "trusted.ringsmb.meta", v, sizeof v) < 0) {
    WARN("no trusted.* xattrs here (not root, or the filesystem lacks them): not tested");
    return;
  }
  CHECK(hidden.u32(kAttributesAt) == (kHidden | kArchive));
}

// A lookup that the fast path's openat2 found missing, and a FILE_CREATE,
// ask the folded-name index before any statx of the exact name: the answers
// must be those a statx would have given.
TEST_CASE("create: names missing under the exact spelling, on a case-insensitive share", "[smb2]") {
  Smb2Fixture f;
  f.write_file("Foo.txt", "x");
  f.mkdir("Dir");
  REQUIRE(::symlink("nowhere", (f.dir() / "dangle").c_str()) == 0);
  REQUIRE(::symlink("nowhere", (f.dir() / "Dir" / "dangle").c_str()) == 0);
  FileId id;
  CHECK(f.create("missing.txt", FILE_READ_DATA, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create("Dir\\missing.txt", FILE_READ_DATA, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create("FOO.TXT", FILE_READ_DATA, kOpen, 0, id) == NtStatus::Success);
  CHECK(f.create("foo.txt", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameCollision);
  CHECK(f.create("Foo.txt", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameCollision);
  CHECK(f.create("dir\\new.txt", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::Success);
  CHECK(std::filesystem::exists(f.dir() / "Dir" / "new.txt"));
  CHECK(f.create("Dir\\NEW.TXT", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameCollision);
  // A dangling symlink: openat2 met ENOENT, but the name exists.
  constexpr uint32_t kDirectoryFile = 0x1;
  CHECK(f.create("dangle", FILE_READ_DATA, kOpen, kDirectoryFile, id) == NtStatus::StoppedOnSymlink);
  CHECK(f.create("Dir\\dangle", FILE_READ_DATA, kOpenIf, kDirectoryFile, id) == NtStatus::StoppedOnSymlink);
  CHECK(f.create("dangle", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameCollision);
  CHECK(f.create("DANGLE", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameCollision);
  CHECK(f.create("made.txt", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::Success);
  CHECK(std::filesystem::exists(f.dir() / "made.txt"));
}

TEST_CASE("create: the quota index's name, in any case, with or without a leading separator", "[smb2]") {
  CHECK(names_quota_file(test::u16le("$Extend\\$Quota:$Q:$INDEX_ALLOCATION")));
  CHECK(names_quota_file(test::u16le("\\$extend\\$QUOTA:$q:$index_allocation")));
  CHECK_FALSE(names_quota_file(test::u16le("\\\\$Extend\\$Quota:$Q:$INDEX_ALLOCATION")));  // two separators
  CHECK_FALSE(names_quota_file(test::u16le("$Extend\\$Quota:$Q:$INDEX_ALLOCATIO")));
  CHECK_FALSE(names_quota_file(test::u16le("$Extend\\$Quota:$Q:$INDEX_ALLOCATIONS")));
  CHECK_FALSE(names_quota_file(test::u16le("$Extend/$Quota:$Q:$INDEX_ALLOCATION")));
  CHECK_FALSE(names_quota_file(test::u16le("")));
  // U+014E in place of the last 'N' (U+004E): the same low byte, not the name.
  Bytes near = test::u16le("$Extend\\$Quota:$Q:$INDEX_ALLOCATION");
  near.back() = 0x01;
  CHECK_FALSE(names_quota_file(near));
  near.pop_back();  // odd length
  CHECK_FALSE(names_quota_file(near));
}
