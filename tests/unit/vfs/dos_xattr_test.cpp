#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "temp_dir.hpp"
#include "vfs/dos_xattr.hpp"
#include "vfs/file_info.hpp"

using namespace ringsmb::vfs;

TEST_CASE("user.DOSATTRIB values parse as Samba writes them", "[vfs][dosattrib]") {
  CHECK(parse_dos_xattr(std::string_view("0x22\0", 5)) == std::optional<uint32_t>(0x22));
  CHECK(parse_dos_xattr("0x6") == std::optional<uint32_t>(0x6));
  CHECK(parse_dos_xattr("20") == std::optional<uint32_t>(0x20));
  // Samba's NDR blob after the text is ignored.
  CHECK(parse_dos_xattr(std::string_view("0x20\0\x03\0\x03\0\x11", 10)) == std::optional<uint32_t>(0x20));
  // Only HIDDEN, SYSTEM and ARCHIVE are taken from it.
  CHECK(parse_dos_xattr("0x97") == std::optional<uint32_t>(0x06));
  CHECK_FALSE(parse_dos_xattr(""));
  CHECK_FALSE(parse_dos_xattr("0x"));
  CHECK_FALSE(parse_dos_xattr("zz"));
}

TEST_CASE("stored attributes replace SYSTEM and ARCHIVE, add HIDDEN", "[vfs][dosattrib]") {
  constexpr uint32_t H = FILE_ATTRIBUTE_HIDDEN, S = FILE_ATTRIBUTE_SYSTEM, A = FILE_ATTRIBUTE_ARCHIVE,
                     R = FILE_ATTRIBUTE_READONLY, D = FILE_ATTRIBUTE_DIRECTORY, N = FILE_ATTRIBUTE_NORMAL;
  CHECK(merge_dos_attributes(A, H | S) == (H | S));         // archive cleared, hidden + system set
  CHECK(merge_dos_attributes(A | R, A) == (A | R));         // readonly stays (mode)
  CHECK(merge_dos_attributes(D, 0) == D);
  CHECK(merge_dos_attributes(A, 0) == N);                   // everything cleared: NORMAL
  CHECK(merge_dos_attributes(A | H, 0) == H);               // a dot file stays hidden
}

TEST_CASE("user.DOSATTRIB round trip on a file", "[vfs][dosattrib]") {
  test::TempDir dir;
  dir.write_file("f", "x");
  int fd = ::open((dir.path() / "f").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK_FALSE(read_dos_xattr(fd));
  int err = write_dos_xattr(fd, FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY);
  if (err == ENOTSUP) {
    WARN("no user xattrs on " << dir.path());
    ::close(fd);
    return;
  }
  REQUIRE(err == 0);
  char raw[16] = {};
  ssize_t n = fgetxattr(fd, kDosAttribXattr, raw, sizeof raw);
  CHECK(std::string_view(raw, size_t(n)) == std::string_view("0x22\0", 5));  // READONLY is not stored
  CHECK(read_dos_xattr(fd) == std::optional<uint32_t>(0x22));
  CHECK(read_dos_xattr_at(dir.fd(), "f") == std::optional<uint32_t>(0x22));
  CHECK_FALSE(read_dos_xattr_at(dir.fd(), "missing"));
  // An O_PATH descriptor (attribute-only opens) reads and writes through /proc.
  int path_fd = ::open((dir.path() / "f").c_str(), O_PATH | O_CLOEXEC);
  REQUIRE(path_fd >= 0);
  CHECK(write_dos_xattr(path_fd, FILE_ATTRIBUTE_SYSTEM) == 0);
  CHECK(read_dos_xattr(path_fd) == std::optional<uint32_t>(FILE_ATTRIBUTE_SYSTEM));
  ::close(path_fd);
  ::close(fd);
}
