#include "vfs/dos_xattr.hpp"

#include <sys/xattr.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "vfs/file_info.hpp"

namespace ringsmb::vfs {
namespace {

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

std::optional<uint32_t> from_buffer(const char* buf, ssize_t n) {
  if (n <= 0) return std::nullopt;
  return parse_dos_xattr(std::string_view(buf, size_t(n)));
}

}  // namespace

std::optional<uint32_t> parse_dos_xattr(std::string_view v) {
  size_t i = 0;
  if (v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) i = 2;
  uint32_t attrs = 0;
  size_t digits = 0;
  for (; i < v.size() && digits < 8; ++i, ++digits) {
    char c = v[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) break;
    attrs = attrs * 16 + uint32_t(d);
  }
  if (digits == 0) return std::nullopt;
  return attrs & kStoredDosAttributes;
}

std::optional<uint32_t> read_dos_xattr(int fd) {
  char buf[64];  // Samba's NDR part after the text is not needed
  ssize_t n = fgetxattr(fd, kDosAttribXattr, buf, sizeof buf);
  if (n < 0 && errno == ERANGE) {
    std::string big(4096, '\0');
    n = fgetxattr(fd, kDosAttribXattr, big.data(), big.size());
    return from_buffer(big.data(), n);
  }
  if (n < 0 && errno == EBADF) n = getxattr(proc_fd_path(fd).c_str(), kDosAttribXattr, buf, sizeof buf);  // O_PATH
  return from_buffer(buf, n);
}

std::optional<uint32_t> read_dos_xattr_at(int dirfd, std::string_view name) {
  std::string path = proc_fd_path(dirfd) + "/" + std::string(name);
  std::string buf(4096, '\0');
  ssize_t n = lgetxattr(path.c_str(), kDosAttribXattr, buf.data(), buf.size());
  return from_buffer(buf.data(), n);
}

int write_dos_xattr(int fd, uint32_t attrs) {
  char text[16];
  int len = snprintf(text, sizeof text, "0x%x", attrs & kStoredDosAttributes);
  size_t size = size_t(len) + 1;  // with the NUL, as Samba writes it
  if (fsetxattr(fd, kDosAttribXattr, text, size, 0) == 0) return 0;
  if (errno != EBADF) return errno;
  if (setxattr(proc_fd_path(fd).c_str(), kDosAttribXattr, text, size, 0) == 0) return 0;
  return errno;
}

uint32_t merge_dos_attributes(uint32_t from_mode, uint32_t stored) {
  uint32_t a = (from_mode & ~(FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_NORMAL)) |
               (stored & kStoredDosAttributes);
  // A directory's READONLY is kept only in the metadata (vfs/file_meta.hpp).
  if (from_mode & FILE_ATTRIBUTE_DIRECTORY) a |= stored & FILE_ATTRIBUTE_READONLY;
  return a ? a : FILE_ATTRIBUTE_NORMAL;
}

}  // namespace ringsmb::vfs
