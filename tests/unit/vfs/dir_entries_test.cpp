#include <catch2/catch.hpp>

#include "vfs/dir_entries.hpp"
#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

DirEntry entry(std::string name) {
  DirEntry e;
  e.name = std::move(name);
  e.file_index = 7;
  e.st.creation_time = 0x0101010101010101ULL;
  e.st.last_access_time = 0x0202020202020202ULL;
  e.st.last_write_time = 0x0303030303030303ULL;
  e.st.change_time = 0x0404040404040404ULL;
  e.st.end_of_file = 1234;
  e.st.allocation_size = 4096;
  e.st.attributes = FILE_ATTRIBUTE_ARCHIVE;
  e.st.file_id = 0xAABBCCDD11223344ULL;
  return e;
}

struct ClassLayout {
  FileInfoClass cls;
  size_t fixed;
  size_t name_length_offset;
  size_t file_id_offset;  // 0: none
};

const ClassLayout kLayouts[] = {
    {FileInfoClass::Directory, 64, 60, 0},
    {FileInfoClass::FullDirectory, 68, 60, 0},
    {FileInfoClass::BothDirectory, 94, 60, 0},
    {FileInfoClass::IdBothDirectory, 104, 60, 96},
    {FileInfoClass::IdFullDirectory, 80, 60, 72},
    {FileInfoClass::Names, 12, 8, 0},
};

std::string utf16_at(const Bytes& b, size_t off, size_t len) {
  std::string s;
  REQUIRE(off + len <= b.size());
  REQUIRE(utf16le_to_utf8(ByteSpan(b).subspan(off, len), s));
  return s;
}

}  // namespace

TEST_CASE("dir entry classes: sizes and field offsets", "[vfs]") {
  for (const auto& l : kLayouts) {
    INFO("class " << int(l.cls));
    CHECK(is_dir_info_class(l.cls));
    Bytes out;
    size_t off = 99;
    REQUIRE(encode_dir_entry(l.cls, entry("abc.txt"), 0, 65536, out, off));
    CHECK(off == 0);
    REQUIRE(out.size() == l.fixed + 14);
    CHECK(load_le32(&out[0]) == 0);  // NextEntryOffset
    CHECK(load_le32(&out[4]) == 7);  // FileIndex
    CHECK(load_le32(&out[l.name_length_offset]) == 14);
    CHECK(utf16_at(out, l.fixed, 14) == "abc.txt");
    if (l.cls != FileInfoClass::Names) {
      CHECK(load_le64(&out[8]) == 0x0101010101010101ULL);
      CHECK(load_le64(&out[32]) == 0x0404040404040404ULL);
      CHECK(load_le64(&out[40]) == 1234);
      CHECK(load_le64(&out[48]) == 4096);
      CHECK(load_le32(&out[56]) == FILE_ATTRIBUTE_ARCHIVE);
    }
    if (l.fixed > 64) CHECK(load_le32(&out[64]) == 0);  // EaSize
    if (l.file_id_offset) CHECK(load_le64(&out[l.file_id_offset]) == 0xAABBCCDD11223344ULL);
  }
  CHECK_FALSE(is_dir_info_class(FileInfoClass::Basic));
  Bytes out;
  size_t off = 0;
  CHECK_FALSE(encode_dir_entry(FileInfoClass::Basic, entry("x"), 0, 65536, out, off));
  CHECK(out.empty());
}

TEST_CASE("FileBothDirectoryInformation carries the generated 8.3 name of a long name", "[vfs]") {
  Bytes out;
  size_t off = 0;
  REQUIRE(encode_dir_entry(FileInfoClass::IdBothDirectory, entry("LongFileName.txt"), 0, 65536, out, off));
  const std::string want = short_name_of("LongFileName.txt");
  REQUIRE(want.size() == 12);
  CHECK(out[68] == 24);  // ShortNameLength, bytes
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(out[70 + 2 * i] == uint8_t(want[i]));
    CHECK(out[71 + 2 * i] == 0);
  }
}

TEST_CASE("FileBothDirectoryInformation: no short name for an 8.3 name", "[vfs]") {
  Bytes out;
  size_t off = 0;
  REQUIRE(encode_dir_entry(FileInfoClass::BothDirectory, entry("SHORT.TXT"), 0, 65536, out, off));
  CHECK(out[68] == 0);  // ShortNameLength
  for (size_t i = 70; i < 94; ++i) CHECK(out[i] == 0);
}

TEST_CASE("dir entries are 8-byte aligned relative to base", "[vfs]") {
  Bytes out = {0xEE, 0xEE, 0xEE};  // a header before the buffer
  const size_t base = 3;
  size_t first = 0, second = 0, third = 0;
  REQUIRE(encode_dir_entry(FileInfoClass::Directory, entry("a"), base, 65536, out, first));
  CHECK(first == 3);
  CHECK(out.size() == 3 + 66);
  REQUIRE(encode_dir_entry(FileInfoClass::Directory, entry("bb"), base, 65536, out, second));
  CHECK((second - base) % 8 == 0);
  CHECK(second == 3 + 72);
  for (size_t i = 3 + 66; i < second; ++i) CHECK(out[i] == 0);  // padding is zero
  // The caller chains entries by patching NextEntryOffset.
  store_le32(&out[first], uint32_t(second - first));
  REQUIRE(encode_dir_entry(FileInfoClass::Names, entry("c"), base, 65536, out, third));
  CHECK((third - base) % 8 == 0);
  CHECK(out.size() == third + 14);
}

TEST_CASE("dir entry refused when it would exceed max_size", "[vfs]") {
  Bytes out;
  size_t off = 0;
  // 64 + 2 bytes: exactly fits.
  REQUIRE(encode_dir_entry(FileInfoClass::Directory, entry("a"), 0, 66, out, off));
  const Bytes before = out;
  size_t off2 = 12345;
  // Next one would start at 72 and end at 138.
  CHECK_FALSE(encode_dir_entry(FileInfoClass::Directory, entry("a"), 0, 137, out, off2));
  CHECK(out == before);
  CHECK(off2 == 12345);
  CHECK(encode_dir_entry(FileInfoClass::Directory, entry("a"), 0, 138, out, off2));
  CHECK(off2 == 72);
  Bytes empty;
  CHECK_FALSE(encode_dir_entry(FileInfoClass::Directory, entry("a"), 0, 65, empty, off));
  CHECK(empty.empty());
}
