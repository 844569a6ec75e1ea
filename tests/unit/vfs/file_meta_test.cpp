#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "temp_dir.hpp"
#include "vfs/file_meta.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

TEST_CASE("file meta: encode and parse", "[vfs]") {
  FileMeta m;
  m.creation_time = 0x01D0000012345677ull;
  m.change_time = 1234567;
  m.change_valid_until = 7654321;
  m.sparse = true;
  auto b = encode_file_meta(m);
  REQUIRE(b.size() == kFileMetaSize);
  CHECK(b[0] == 1);
  CHECK(b[1] == 7);
  auto p = parse_file_meta(b);
  REQUIRE(p);
  CHECK(p->creation_time == m.creation_time);
  CHECK(p->change_time == m.change_time);
  CHECK(p->change_valid_until == m.change_valid_until);
  CHECK(p->sparse);
  FileMeta none;
  auto q = parse_file_meta(encode_file_meta(none));
  REQUIRE(q);
  CHECK(q->empty());
  auto other = b;
  other[0] = 2;  // another version
  CHECK_FALSE(parse_file_meta(other));
  for (size_t n = 0; n < b.size(); ++n) CHECK_FALSE(parse_file_meta(ByteSpan(b.data(), n)));
}

TEST_CASE("file meta: applied to what statx says", "[vfs]") {
  FileStat st;
  st.creation_time = 100;
  st.change_time = 500;
  st.attributes = FILE_ATTRIBUTE_NORMAL;
  FileMeta m;
  m.creation_time = 42;
  m.change_time = 77;
  m.change_valid_until = 600;
  m.sparse = true;
  FileStat a = st;
  apply_file_meta(m, a);
  CHECK(a.creation_time == 42);
  CHECK(a.change_time == 77);
  CHECK(a.attributes == FILE_ATTRIBUTE_SPARSE_FILE);  // NORMAL only when nothing else
  FileStat later = st;
  later.change_time = 601;  // the file changed after the set
  apply_file_meta(m, later);
  CHECK(later.change_time == 601);
  FileStat dir = st;
  dir.is_directory = true;
  dir.attributes = FILE_ATTRIBUTE_DIRECTORY;
  apply_file_meta(m, dir);
  CHECK(dir.attributes == FILE_ATTRIBUTE_DIRECTORY);  // no sparse directories
}

TEST_CASE("file meta: stored in trusted.ringsmb.meta, read through fd, O_PATH fd and name", "[vfs]") {
  test::TempDir dir;
  std::string path = (dir.path() / "f").string();
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  CHECK(read_file_meta(fd).empty());
  FileMeta m;
  m.creation_time = 99999;
  int err = write_file_meta(fd, m);
  if (err == EPERM || err == ENOTSUP) {
    ::close(fd);
    WARN("no trusted.* xattrs here (not root, or the filesystem lacks them): not tested");
    return;
  }
  REQUIRE(err == 0);
  CHECK(read_file_meta(fd).creation_time == 99999u);
  int path_fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  REQUIRE(path_fd >= 0);
  CHECK(read_file_meta(path_fd).creation_time == 99999u);
  int dfd = ::open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK(read_file_meta_at(dfd, "f").creation_time == 99999u);
  REQUIRE(write_file_meta(path_fd, FileMeta{}) == 0);  // empty: removed
  CHECK(fgetxattr(fd, kFileMetaXattr, nullptr, 0) < 0);
  ::close(dfd);
  ::close(path_fd);
  ::close(fd);
}

TEST_CASE("file meta: DOS attributes the mode cannot express", "[vfs]") {
  FileMeta m;
  m.dos_attributes = FILE_ATTRIBUTE_HIDDEN;
  auto b = encode_file_meta(m);
  REQUIRE(b.size() == kFileMetaSize);
  CHECK(b[1] == 8);
  CHECK(load_le32(b.data() + 4) == FILE_ATTRIBUTE_HIDDEN);
  auto p = parse_file_meta(b);
  REQUIRE(p);
  CHECK(p->dos_attributes == FILE_ATTRIBUTE_HIDDEN);
  CHECK_FALSE(p->empty());
  m.dos_attributes = 0;  // ARCHIVE cleared on a file: kept, not "none"
  p = parse_file_meta(encode_file_meta(m));
  REQUIRE(p);
  CHECK(p->dos_attributes == 0u);
  // A value of the first layout (reserved bytes zero, no flag 8) has none.
  auto old = encode_file_meta(FileMeta{});
  CHECK_FALSE(parse_file_meta(old)->dos_attributes);

  // Kept only where they differ from what the mode implies.
  const uint32_t file_mode = FILE_ATTRIBUTE_ARCHIVE, dir_mode = FILE_ATTRIBUTE_DIRECTORY;
  CHECK_FALSE(dos_attributes_to_keep(FILE_ATTRIBUTE_ARCHIVE, file_mode));
  CHECK_FALSE(dos_attributes_to_keep(FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY, file_mode | 1));
  CHECK(dos_attributes_to_keep(FILE_ATTRIBUTE_NORMAL, file_mode) == 0u);
  CHECK(dos_attributes_to_keep(FILE_ATTRIBUTE_HIDDEN, file_mode) == uint32_t(FILE_ATTRIBUTE_HIDDEN));
  CHECK_FALSE(dos_attributes_to_keep(FILE_ATTRIBUTE_DIRECTORY, dir_mode));
  CHECK(dos_attributes_to_keep(FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_SYSTEM, dir_mode) ==
        uint32_t(FILE_ATTRIBUTE_SYSTEM));

  // Applied: ARCHIVE cleared leaves NORMAL; READONLY from the mode stays.
  FileStat st;
  st.attributes = FILE_ATTRIBUTE_ARCHIVE;
  FileMeta cleared;
  cleared.dos_attributes = 0;
  apply_file_meta(cleared, st);
  CHECK(st.attributes == FILE_ATTRIBUTE_NORMAL);
  st.attributes = FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY;
  apply_file_meta(cleared, st);
  CHECK(st.attributes == FILE_ATTRIBUTE_READONLY);
  st.attributes = FILE_ATTRIBUTE_ARCHIVE;
  FileMeta hidden;
  hidden.dos_attributes = FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_ARCHIVE;
  apply_file_meta(hidden, st);
  CHECK(st.attributes == (FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_ARCHIVE));
}
