#include <catch2/catch.hpp>
#include <fcntl.h>

#include <filesystem>

#include "fixture.hpp"

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
