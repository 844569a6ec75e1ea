#include "vfs/directory_empty.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace ringsmb::vfs {

Result<bool> directory_empty(int fd) {
  int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return std::unexpected(nt_status_from_errno(errno));
  DIR* d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return std::unexpected(nt_status_from_errno(errno));
  }
  bool empty = true;
  while (struct dirent* de = readdir(d)) {
    std::string_view n(de->d_name);
    if (n != "." && n != "..") {
      empty = false;
      break;
    }
  }
  closedir(d);
  return empty;
}

}  // namespace ringsmb::vfs
