#include "smb2/files/recycle.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "vfs/paths.hpp"
#include "vfs/veto.hpp"

namespace ringsmb::smb2 {

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

bool starts_with_dir(std::string_view path, std::string_view dir) {
  if (path.size() < dir.size()) return false;
  for (size_t i = 0; i < dir.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(path[i])) != std::tolower(static_cast<unsigned char>(dir[i])))
      return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

// vfs_recycle's filters, in its order: the bin itself, then size, file
// name, directory names. True: this file goes to the bin.
bool wanted(const config::RecycleConfig& r, std::string_view path, std::string_view leaf, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return false;
  if (starts_with_dir(path, r.repository)) return false;
  uint64_t size = uint64_t(st.st_size);
  if (r.maxsize_bytes > 0 && size > r.maxsize_bytes) return false;
  if (r.minsize_bytes > 0 && size < r.minsize_bytes) return false;
  if (vfs::is_vetoed_name(r.exclude, leaf, false)) return false;
  std::string_view dir = path.substr(0, path.size() - leaf.size());
  return !vfs::is_vetoed_path(r.exclude_dir, dir, false);
}

// Opens (making what is missing) each directory of RELATIVE below ROOT_FD,
// one component at a time and never through a symlink. The bin's own
// directory gets directory_mode, those below it subdir_mode, as in Samba.
int open_bin_directory(int root_fd, const std::string& relative, const config::RecycleConfig& r) {
  int dir = dup(root_fd);
  size_t pos = 0;
  bool first = true;
  while (dir >= 0 && pos < relative.size()) {
    size_t slash = relative.find('/', pos);
    std::string comp = relative.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    pos = slash == std::string::npos ? relative.size() : slash + 1;
    if (comp.empty() || comp == ".") continue;
    mode_t mode = first ? r.directory_mode : r.subdir_mode.value_or(r.directory_mode);
    first = false;
    if (mkdirat(dir, comp.c_str(), mode) != 0 && errno != EEXIST) {
      int err = errno;
      close(dir);
      errno = err;
      return -1;
    }
    int next = vfs::open_beneath(dir, comp.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
    close(dir);
    if (next < 0) errno = -next;
    dir = next < 0 ? -1 : next;
  }
  return dir;
}

bool exists(int dirfd, const std::string& name, struct stat* st = nullptr) {
  struct stat tmp;
  return fstatat(dirfd, name.c_str(), st ? st : &tmp, AT_SYMLINK_NOFOLLOW) == 0;
}

// Renames LEAF into BIN without replacing anything: as LEAF, or (versions)
// "Copy #N of LEAF". Without versions an older copy of the name is
// replaced, as vfs_recycle does. The final name, or "" with errno set.
std::string rename_into(vfs::NameIndexCache& names, int parent_fd, std::string_view leaf, int bin,
                        const config::RecycleConfig& r) {
  const std::string base(leaf);
  struct stat old;
  bool keep_old = r.versions && !vfs::is_vetoed_name(r.noversions, leaf, false);
  if (!keep_old && exists(bin, base, &old) && S_ISREG(old.st_mode)) {
    auto change = names.begin_change(bin);
    if (unlinkat(bin, base.c_str(), 0) == 0) change.removed(base);
    else change.unchanged();
  }
  std::string target = base;
  for (int copy = 1; copy < 10000; ++copy) {
    auto from = names.begin_change(parent_fd);
    auto to = names.begin_change(bin);
    if (renameat2(parent_fd, base.c_str(), bin, target.c_str(), RENAME_NOREPLACE) == 0) {
      from.removed(base);
      to.added(target);
      return target;
    }
    int err = errno;
    from.unchanged();
    to.unchanged();
    if (err != EEXIST) {
      errno = err;
      return "";
    }
    target = "Copy #" + std::to_string(copy) + " of " + base;
  }
  errno = EEXIST;
  return "";
}

void touch(int bin, const std::string& name, bool mtime_too) {
  struct timespec times[2];
  times[0].tv_nsec = UTIME_NOW;
  times[1].tv_nsec = mtime_too ? UTIME_NOW : UTIME_OMIT;
  times[0].tv_sec = times[1].tv_sec = 0;
  if (utimensat(bin, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
    LOG_INFO("recycle: touching %s failed: %m", name.c_str());
}

}  // namespace

RecycleOutcome move_to_recycle_bin(vfs::NameIndexCache& names, int root_fd, int parent_fd, std::string_view path,
                                   std::string_view leaf, const config::RecycleConfig& recycle) {
  if (!recycle.enabled) return RecycleOutcome::NotMoved;
  struct stat st;
  if (fstatat(parent_fd, std::string(leaf).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return RecycleOutcome::NotMoved;
  if (!wanted(recycle, path, leaf, st)) return RecycleOutcome::NotMoved;
  std::string bin_path = recycle.repository;
  std::string_view parent = path.substr(0, path.size() - leaf.size());
  if (recycle.keeptree && !parent.empty()) bin_path += "/" + std::string(parent);
  Fd bin(open_bin_directory(root_fd, bin_path, recycle));
  if (bin.fd < 0) {
    LOG_WARN("recycle: cannot make %s (%m); %.*s is deleted instead", bin_path.c_str(), int(path.size()), path.data());
    return RecycleOutcome::NotMoved;
  }
  std::string final_name = rename_into(names, parent_fd, leaf, bin.fd, recycle);
  if (final_name.empty()) {
    LOG_WARN("recycle: moving %.*s into %s failed (%m); it is deleted instead", int(path.size()), path.data(),
             bin_path.c_str());
    return RecycleOutcome::NotMoved;
  }
  if (recycle.touch || recycle.touch_mtime) touch(bin.fd, final_name, recycle.touch_mtime);
  LOG_DEBUG("recycle: %.*s -> %s/%s", int(path.size()), path.data(), bin_path.c_str(), final_name.c_str());
  return RecycleOutcome::Moved;
}

}  // namespace ringsmb::smb2
