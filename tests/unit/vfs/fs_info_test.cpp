#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "temp_dir.hpp"
#include "vfs/file_info.hpp"
#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

Bytes encode(FsInfoClass cls, int fd, const VolumeInfo& vol = {}) {
  Bytes out;
  REQUIRE(encode_fs_info(cls, fd, vol, out) == NtStatus::Success);
  return out;
}

std::string utf16_at(const Bytes& b, size_t off, size_t len) {
  std::string s;
  REQUIRE(off + len <= b.size());
  REQUIRE(utf16le_to_utf8(ByteSpan(b).subspan(off, len), s));
  return s;
}

}  // namespace

TEST_CASE("FileFsVolumeInformation", "[vfs]") {
  test::TempDir dir;
  VolumeInfo vol;
  vol.creation_time = 0x0102030405060708ULL;
  vol.serial_number = 0xCAFEBABE;
  vol.label = "share";
  const Bytes b = encode(FsInfoClass::Volume, dir.fd(), vol);
  REQUIRE(b.size() == fscc::kFsVolumeInfoFixedSize + 10);
  CHECK(load_le64(&b[0]) == 0x0102030405060708ULL);
  CHECK(load_le32(&b[8]) == 0xCAFEBABE);
  CHECK(load_le32(&b[12]) == 10);
  CHECK(b[16] == 0);
  CHECK(b[17] == 0);
  CHECK(utf16_at(b, 18, 10) == "share");
}

TEST_CASE("FileFsSizeInformation and FileFsFullSizeInformation match statfs", "[vfs]") {
  test::TempDir dir;
  struct statfs sfs;
  REQUIRE(fstatfs(dir.fd(), &sfs) == 0);
  const uint64_t unit = sfs.f_frsize ? sfs.f_frsize : sfs.f_bsize;

  Bytes b = encode(FsInfoClass::Size, dir.fd());
  REQUIRE(b.size() == fscc::kFsSizeInfoSize);
  CHECK(load_le64(&b[0]) == sfs.f_blocks);
  const uint32_t spu = load_le32(&b[16]);
  const uint32_t bps = load_le32(&b[20]);
  CHECK(uint64_t(spu) * bps == unit);

  b = encode(FsInfoClass::FullSize, dir.fd());
  REQUIRE(b.size() == fscc::kFsFullSizeInfoSize);
  CHECK(load_le64(&b[0]) == sfs.f_blocks);
  CHECK(load_le64(&b[8]) <= load_le64(&b[16]));  // caller available <= actually free
  CHECK(uint64_t(load_le32(&b[24])) * load_le32(&b[28]) == unit);
}

TEST_CASE("FileFsDeviceInformation and FileFsSectorSizeInformation", "[vfs]") {
  test::TempDir dir;
  Bytes b = encode(FsInfoClass::Device, dir.fd());
  REQUIRE(b.size() == fscc::kFsDeviceInfoSize);
  CHECK(load_le32(&b[0]) == 0x7);  // FILE_DEVICE_DISK
  CHECK(load_le32(&b[4]) == 0x20); // FILE_DEVICE_IS_MOUNTED
  b = encode(FsInfoClass::SectorSize, dir.fd());
  REQUIRE(b.size() == fscc::kFsSectorSizeInfoSize);
  CHECK(load_le32(&b[0]) >= 512);
  CHECK((load_le32(&b[16]) & ~0x8u) == 0x3);  // aligned; TRIM_ENABLED (0x8) where holes can be punched
  struct statfs sfs = {};
  REQUIRE(fstatfs(dir.fd(), &sfs) == 0);
  if (long(sfs.f_type) == 0xEF53 || long(sfs.f_type) == 0x01021994) CHECK((load_le32(&b[16]) & 0x8) != 0);
}

TEST_CASE("FileFsAttributeInformation", "[vfs]") {
  test::TempDir dir;
  VolumeInfo vol;
  Bytes b = encode(FsInfoClass::Attribute, dir.fd(), vol);
  REQUIRE(b.size() == fscc::kFsAttributeInfoFixedSize + 8);
  const uint32_t attrs = load_le32(&b[0]);
  CHECK((attrs & 0x1) == 0);          // not case sensitive
  CHECK((attrs & 0x2) != 0);          // FILE_CASE_PRESERVED_NAMES
  CHECK((attrs & 0x4) != 0);          // FILE_UNICODE_ON_DISK
  CHECK((attrs & 0x8) != 0);          // FILE_PERSISTENT_ACLS
  CHECK((attrs & 0x00040000) == 0);   // no FILE_NAMED_STREAMS
  CHECK(load_le32(&b[4]) == 255);
  CHECK(load_le32(&b[8]) == 8);
  CHECK(utf16_at(b, 12, 8) == "NTFS");
  vol.case_sensitive = true;
  b = encode(FsInfoClass::Attribute, dir.fd(), vol);
  CHECK((load_le32(&b[0]) & 0x1) != 0);
  vol.named_streams = true;  // only where the share stores streams
  b = encode(FsInfoClass::Attribute, dir.fd(), vol);
  CHECK((load_le32(&b[0]) & 0x00040000) != 0);
}

TEST_CASE("unsupported filesystem information classes", "[vfs]") {
  test::TempDir dir;
  Bytes out;
  CHECK(encode_fs_info(FsInfoClass::ObjectId, dir.fd(), {}, out) == NtStatus::InvalidParameter);
  CHECK(encode_fs_info(FsInfoClass::Label, dir.fd(), {}, out) == NtStatus::InvalidInfoClass);
  CHECK(encode_fs_info(FsInfoClass::Control, dir.fd(), {}, out) == NtStatus::InvalidInfoClass);
  CHECK(encode_fs_info(static_cast<FsInfoClass>(99), dir.fd(), {}, out) == NtStatus::InvalidInfoClass);
  CHECK(out.empty());
  CHECK(encode_fs_info(FsInfoClass::Size, -1, {}, out) == NtStatus::InvalidHandle);
}

TEST_CASE("memory_filesystem_device: tmpfs's device, 0 elsewhere", "[vfs]") {
  int shm = open("/dev/shm", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs sfs = {};
  if (shm >= 0 && fstatfs(shm, &sfs) == 0 && long(sfs.f_type) == 0x01021994) {
    auto st = stat_fd(shm);
    REQUIRE(st);
    CHECK(memory_filesystem_device(shm) == st->device);
    CHECK(memory_filesystem_device(shm) != 0);
  } else {
    WARN("no tmpfs at /dev/shm");
  }
  if (shm >= 0) close(shm);
  test::TempDir dir;  // the temporary directory: a disk here (tmpfs is checked above)
  struct statfs tmp = {};
  REQUIRE(fstatfs(dir.fd(), &tmp) == 0);
  if (long(tmp.f_type) != 0x01021994) CHECK(memory_filesystem_device(dir.fd()) == 0);
}
