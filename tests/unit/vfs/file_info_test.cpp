#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include "temp_dir.hpp"
#include "vfs/file_info.hpp"
#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

FileStat sample_file() {
  FileStat st;
  st.creation_time = 0x0101010101010101ULL;
  st.last_access_time = 0x0202020202020202ULL;
  st.last_write_time = 0x0303030303030303ULL;
  st.change_time = 0x0404040404040404ULL;
  st.end_of_file = 5000;
  st.allocation_size = 8192;
  st.attributes = FILE_ATTRIBUTE_ARCHIVE;
  st.file_id = 0x1122334455667788ULL;
  st.nlink = 3;
  st.mode = S_IFREG | 0644;
  st.uid = 1000;
  st.gid = 100;
  return st;
}

Bytes encode(FileInfoClass cls, const FileStat& st, const OpenInfo& open = {}) {
  Bytes out;
  REQUIRE(encode_file_info(cls, st, open, out) == NtStatus::Success);
  return out;
}

std::string utf16_at(const Bytes& b, size_t off, size_t len) {
  std::string s;
  REQUIRE(off + len <= b.size());
  REQUIRE(utf16le_to_utf8(ByteSpan(b).subspan(off, len), s));
  return s;
}

}  // namespace

TEST_CASE("FILETIME conversion", "[vfs]") {
  CHECK(unix_to_filetime(0, 0) == 116444736000000000ULL);
  CHECK(unix_to_filetime(1, 100) == 116444736000000000ULL + 10'000'000 + 1);
  CHECK(unix_to_filetime(-11644473600LL, 0) == 0);
  CHECK(unix_to_filetime(-11644473601LL, 0) == 0);  // before 1601 clamps
  CHECK(unix_to_filetime(1700000000, 123456789) == 133444736001234567ULL);
  const auto ts = filetime_to_timespec(133444736001234567ULL);
  CHECK(ts.tv_sec == 1700000000);
  CHECK(ts.tv_nsec == 123456700);
  const auto epoch = filetime_to_timespec(116444736000000000ULL);
  CHECK(epoch.tv_sec == 0);
  CHECK(epoch.tv_nsec == 0);
  const auto old = filetime_to_timespec(0);
  CHECK(old.tv_sec == -11644473600LL);
}

TEST_CASE("dos_attributes follow the mode", "[vfs]") {
  FileStat st = sample_file();
  CHECK(dos_attributes(st, "a.txt", false) == FILE_ATTRIBUTE_ARCHIVE);
  CHECK(dos_attributes(st, "dir\\.hidden", true) == (FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_HIDDEN));
  CHECK(dos_attributes(st, ".hidden", false) == FILE_ATTRIBUTE_ARCHIVE);
  st.mode = S_IFREG | 0444;
  CHECK(dos_attributes(st, "ro", false) == (FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY));
  st.mode = S_IFDIR | 0555;
  st.is_directory = true;
  CHECK(dos_attributes(st, "d", false) == FILE_ATTRIBUTE_DIRECTORY);
  CHECK(dos_attributes(st, "..", true) == FILE_ATTRIBUTE_DIRECTORY);
  st.mode = S_IFIFO | 0644;
  st.is_directory = false;
  CHECK(dos_attributes(st, "fifo", false) == FILE_ATTRIBUTE_NORMAL);
}

TEST_CASE("stat_fd and stat_at", "[vfs]") {
  test::TempDir dir;
  dir.write_file("f", std::string(5000, 'x'));
  dir.mkdir("d");
  std::filesystem::create_symlink("f", dir.path() / "link");
  auto f = stat_at(dir.fd(), "f");
  REQUIRE(f);
  CHECK(f->end_of_file == 5000);
  CHECK(f->allocation_size % 4096 == 0);
  CHECK_FALSE(f->is_directory);
  CHECK(f->nlink == 1);
  CHECK(f->uid == getuid());
  CHECK(f->attributes & FILE_ATTRIBUTE_ARCHIVE);
  CHECK(f->creation_time <= f->change_time);
  CHECK(f->last_write_time > unix_to_filetime(1600000000, 0));

  auto d = stat_at(dir.fd(), "d");
  REQUIRE(d);
  CHECK(d->is_directory);
  CHECK(d->end_of_file == 0);
  CHECK(d->allocation_size == 0);
  CHECK(d->attributes == FILE_ATTRIBUTE_DIRECTORY);

  auto l = stat_at(dir.fd(), "link");
  REQUIRE(l);
  CHECK(S_ISLNK(l->mode));

  auto root = stat_fd(dir.fd());
  REQUIRE(root);
  CHECK(root->is_directory);
  struct stat sb;
  REQUIRE(fstat(dir.fd(), &sb) == 0);
  CHECK(root->file_id == sb.st_ino);
  CHECK(root->device == sb.st_dev);

  CHECK(stat_at(dir.fd(), "missing").error() == NtStatus::ObjectNameNotFound);
  CHECK(stat_fd(-1).error() == NtStatus::InvalidHandle);
}

TEST_CASE("FileBasicInformation layout", "[vfs]") {
  const Bytes b = encode(FileInfoClass::Basic, sample_file());
  REQUIRE(b.size() == fscc::kBasicInfoSize);
  CHECK(load_le64(&b[0]) == 0x0101010101010101ULL);
  CHECK(load_le64(&b[8]) == 0x0202020202020202ULL);
  CHECK(load_le64(&b[16]) == 0x0303030303030303ULL);
  CHECK(load_le64(&b[24]) == 0x0404040404040404ULL);
  CHECK(load_le32(&b[32]) == FILE_ATTRIBUTE_ARCHIVE);
  CHECK(load_le32(&b[36]) == 0);
}

TEST_CASE("FileStandardInformation layout", "[vfs]") {
  OpenInfo open;
  open.delete_pending = true;
  const Bytes b = encode(FileInfoClass::Standard, sample_file(), open);
  REQUIRE(b.size() == fscc::kStandardInfoSize);
  CHECK(load_le64(&b[0]) == 8192);
  CHECK(load_le64(&b[8]) == 5000);
  CHECK(load_le32(&b[16]) == 3);
  CHECK(b[20] == 1);
  CHECK(b[21] == 0);
  CHECK(load_le16(&b[22]) == 0);
}

TEST_CASE("small fixed-size file information classes", "[vfs]") {
  OpenInfo open;
  open.access_mask = 0x0012019F;
  open.position = 77;
  open.mode_flags = 0x20;
  const FileStat st = sample_file();
  Bytes b = encode(FileInfoClass::Internal, st);
  REQUIRE(b.size() == fscc::kInternalInfoSize);
  CHECK(load_le64(&b[0]) == 0x1122334455667788ULL);
  b = encode(FileInfoClass::Ea, st);
  REQUIRE(b.size() == fscc::kEaInfoSize);
  CHECK(load_le32(&b[0]) == 0);
  b = encode(FileInfoClass::Access, st, open);
  REQUIRE(b.size() == fscc::kAccessInfoSize);
  CHECK(load_le32(&b[0]) == 0x0012019F);
  b = encode(FileInfoClass::Position, st, open);
  REQUIRE(b.size() == fscc::kPositionInfoSize);
  CHECK(load_le64(&b[0]) == 77);
  b = encode(FileInfoClass::Mode, st, open);
  REQUIRE(b.size() == fscc::kModeInfoSize);
  CHECK(load_le32(&b[0]) == 0x20);
  b = encode(FileInfoClass::Alignment, st);
  REQUIRE(b.size() == fscc::kAlignmentInfoSize);
  CHECK(load_le32(&b[0]) == 0);
  b = encode(FileInfoClass::AttributeTag, st);
  REQUIRE(b.size() == fscc::kAttributeTagInfoSize);
  CHECK(load_le32(&b[0]) == FILE_ATTRIBUTE_ARCHIVE);
  CHECK(load_le32(&b[4]) == 0);
  b = encode(FileInfoClass::Compression, st);
  REQUIRE(b.size() == fscc::kCompressionInfoSize);
  CHECK(load_le64(&b[0]) == 5000);
}

TEST_CASE("FileNetworkOpenInformation layout", "[vfs]") {
  const Bytes b = encode(FileInfoClass::NetworkOpen, sample_file());
  REQUIRE(b.size() == fscc::kNetworkOpenInfoSize);
  CHECK(load_le64(&b[0]) == 0x0101010101010101ULL);
  CHECK(load_le64(&b[24]) == 0x0404040404040404ULL);
  CHECK(load_le64(&b[32]) == 8192);
  CHECK(load_le64(&b[40]) == 5000);
  CHECK(load_le32(&b[48]) == FILE_ATTRIBUTE_ARCHIVE);
  CHECK(load_le32(&b[52]) == 0);
}

TEST_CASE("FileNameInformation and FileNormalizedNameInformation", "[vfs]") {
  OpenInfo open;
  open.name = "dir\\f\xC3\xA9.txt";
  Bytes b = encode(FileInfoClass::Name, sample_file(), open);
  REQUIRE(b.size() == 4 + 2 * 11);
  CHECK(load_le32(&b[0]) == 22);
  CHECK(utf16_at(b, 4, 22) == "\\dir\\f\xC3\xA9.txt");
  b = encode(FileInfoClass::NormalizedName, sample_file(), open);
  REQUIRE(b.size() == 4 + 2 * 10);
  CHECK(utf16_at(b, 4, 20) == "dir\\f\xC3\xA9.txt");
  open.name = "";
  b = encode(FileInfoClass::Name, sample_file(), open);
  REQUIRE(b.size() == 6);
  CHECK(utf16_at(b, 4, 2) == "\\");
}

TEST_CASE("FileAllInformation layout", "[vfs]") {
  OpenInfo open;
  open.access_mask = 0x001F01FF;
  open.position = 9;
  open.mode_flags = 0x10;
  open.name = "a\\b";
  const Bytes b = encode(FileInfoClass::All, sample_file(), open);
  REQUIRE(b.size() == fscc::kAllInfoFixedSize + 8);
  CHECK(load_le64(&b[0]) == 0x0101010101010101ULL);    // Basic.CreationTime
  CHECK(load_le32(&b[32]) == FILE_ATTRIBUTE_ARCHIVE);  // Basic.FileAttributes
  CHECK(load_le64(&b[40]) == 8192);                    // Standard.AllocationSize
  CHECK(load_le64(&b[48]) == 5000);                    // Standard.EndOfFile
  CHECK(load_le32(&b[56]) == 3);                       // NumberOfLinks
  CHECK(b[60] == 0);                                   // DeletePending
  CHECK(b[61] == 0);                                   // Directory
  CHECK(load_le64(&b[64]) == 0x1122334455667788ULL);   // Internal.IndexNumber
  CHECK(load_le32(&b[72]) == 0);                       // Ea.EaSize
  CHECK(load_le32(&b[76]) == 0x001F01FF);              // Access.AccessFlags
  CHECK(load_le64(&b[80]) == 9);                       // Position
  CHECK(load_le32(&b[88]) == 0x10);                    // Mode
  CHECK(load_le32(&b[92]) == 0);                       // Alignment
  CHECK(load_le32(&b[96]) == 8);                       // FileNameLength
  CHECK(utf16_at(b, 100, 8) == "\\a\\b");
}

TEST_CASE("FileStreamInformation", "[vfs]") {
  FileStat st = sample_file();
  Bytes b = encode(FileInfoClass::Stream, st);
  REQUIRE(b.size() == fscc::kStreamInfoFixedSize + 14);
  CHECK(load_le32(&b[0]) == 0);
  CHECK(load_le32(&b[4]) == 14);
  CHECK(load_le64(&b[8]) == 5000);
  CHECK(load_le64(&b[16]) == 8192);
  CHECK(utf16_at(b, 24, 14) == "::$DATA");
  st.is_directory = true;
  b = encode(FileInfoClass::Stream, st);
  CHECK(b.empty());
}

TEST_CASE("FileAlternateNameInformation: the open's 8.3 name, empty when it has none", "[vfs]") {
  Bytes out;
  CHECK(encode_file_info(FileInfoClass::AlternateName, sample_file(), {}, out) == NtStatus::Success);
  REQUIRE(out.size() == 4);
  CHECK(load_le32(out.data()) == 0);  // FileNameLength
  OpenInfo info;
  info.short_name = "TOR~AB12.TXT";
  out.clear();
  CHECK(encode_file_info(FileInfoClass::AlternateName, sample_file(), info, out) == NtStatus::Success);
  REQUIRE(out.size() == 4 + 24);
  CHECK(load_le32(out.data()) == 24);
  CHECK(out[4] == 'T');
}

TEST_CASE("unsupported file information classes", "[vfs]") {
  Bytes out;
  const FileStat st = sample_file();
  CHECK(encode_file_info(FileInfoClass::Rename, st, {}, out) == NtStatus::InvalidInfoClass);
  CHECK(encode_file_info(FileInfoClass::FullEa, st, {}, out) == NtStatus::InvalidInfoClass);
  CHECK(encode_file_info(static_cast<FileInfoClass>(200), st, {}, out) == NtStatus::InvalidInfoClass);
  CHECK(out.empty());
}

TEST_CASE("encoders append to existing output", "[vfs]") {
  Bytes out = {1, 2, 3};
  REQUIRE(encode_file_info(FileInfoClass::Internal, sample_file(), {}, out) == NtStatus::Success);
  REQUIRE(out.size() == 11);
  CHECK(out[0] == 1);
  CHECK(load_le64(&out[3]) == 0x1122334455667788ULL);
}
