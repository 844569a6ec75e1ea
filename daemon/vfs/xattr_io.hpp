// The f*xattr calls on any descriptor the server holds: they fail with
// EBADF on an O_PATH descriptor (an attribute-only open), so those go
// through the /proc/self/fd magic link, which reaches the same inode.
// Shared by the named streams (stream_store) and the EAs (ea_store).
#pragma once

#include <sys/types.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

namespace ringsmb::vfs::xattr_io {

inline constexpr size_t kXattrListMax = 64 * 1024;  // XATTR_LIST_MAX: room for any file's names

inline std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

inline ssize_t get_value(int fd, const char* key, void* buf, size_t n) {
  ssize_t r = fgetxattr(fd, key, buf, n);
  if (r < 0 && errno == EBADF) r = getxattr(proc_fd_path(fd).c_str(), key, buf, n);
  return r;
}

inline int set_value(int fd, const char* key, const void* buf, size_t n, int flags) {
  int r = fsetxattr(fd, key, buf, n, flags);
  if (r < 0 && errno == EBADF) r = setxattr(proc_fd_path(fd).c_str(), key, buf, n, flags);
  return r;
}

inline int remove_value(int fd, const char* key) {
  int r = fremovexattr(fd, key);
  if (r < 0 && errno == EBADF) r = removexattr(proc_fd_path(fd).c_str(), key);
  return r;
}

inline ssize_t list_names(int fd, char* buf, size_t n) {
  ssize_t r = flistxattr(fd, buf, n);
  if (r < 0 && errno == EBADF) r = listxattr(proc_fd_path(fd).c_str(), buf, n);
  return r;
}

// All the xattr names of FD into NAMES (NUL-separated): 0, or an errno;
// ENOTSUP (a filesystem without xattrs) leaves NAMES empty and counts as 0.
inline int list_all(int fd, std::string& names) {
  names.assign(kXattrListMax, '\0');
  ssize_t n = list_names(fd, names.data(), names.size());
  if (n < 0) {
    names.clear();
    return errno == ENOTSUP ? 0 : errno;
  }
  names.resize(size_t(n));
  return 0;
}

// Calls FN(name) for each name of NAMES, the NUL-separated list
// listxattr gives, until it returns false.
template <typename Fn>
void for_each_name(std::string_view names, Fn fn) {
  for (size_t at = 0; at < names.size();) {
    const size_t end = std::min(names.find('\0', at), names.size());
    if (!fn(names.substr(at, end - at))) return;
    at = end + 1;
  }
}

// Whether NAMES (as for_each_name) holds NAME.
inline bool has_name(std::string_view names, std::string_view name) {
  bool found = false;
  for_each_name(names, [&](std::string_view n) { return !(found = n == name); });
  return found;
}

// The whole value of KEY into OUT: 0, or an errno (ENODATA: no such
// attribute). A value that grows between the size probe and the read is
// read again.
inline int read_whole(int fd, const char* key, std::vector<uint8_t>& out) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    ssize_t size = get_value(fd, key, nullptr, 0);
    if (size < 0) return errno;
    out.resize(size_t(size) + 1);  // one more: a value that grew meanwhile shows as ERANGE
    ssize_t n = get_value(fd, key, out.data(), out.size());
    if (n >= 0) {
      out.resize(size_t(n));
      return 0;
    }
    if (errno != ERANGE) return errno;
  }
  return EAGAIN;
}

}  // namespace ringsmb::vfs::xattr_io
