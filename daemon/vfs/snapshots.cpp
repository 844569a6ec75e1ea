// Snapshot directories of a share (vfs/snapshots.hpp).
#include "vfs/snapshots.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/log.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::vfs {
namespace {

constexpr std::string_view kGmtFormat = "@GMT-%Y.%m.%d-%H.%M.%S";
constexpr size_t kGmtTokenLength = 24;  // "@GMT-YYYY.MM.DD-HH.MM.SS"

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

// CHILD relative to PARENT when CHILD is PARENT or lies beneath it (both
// absolute, without '.', '..' or doubled '/'): "" for PARENT itself.
std::optional<std::string> below(std::string_view parent, std::string_view child) {
  while (parent.size() > 1 && parent.back() == '/') parent.remove_suffix(1);
  while (child.size() > 1 && child.back() == '/') child.remove_suffix(1);
  if (parent == "/") return std::string(child.substr(1));
  if (child == parent) return std::string();
  if (!child.starts_with(parent) || child[parent.size()] != '/') return std::nullopt;
  return std::string(child.substr(parent.size() + 1));
}

std::string join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return std::string(a) + "/" + std::string(b);
}

// The mount point of PATH's file system: the highest ancestor on the same
// device (a btrfs subvolume counts as its own file system, as for Samba).
std::string find_mountpoint(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return path;
  std::string current = path;
  while (current != "/") {
    size_t slash = current.rfind('/');
    std::string parent = slash == 0 ? "/" : current.substr(0, slash);
    struct stat pst;
    if (stat(parent.c_str(), &pst) != 0 || pst.st_dev != st.st_dev) break;
    current = parent;
  }
  return current;
}

// The snapshot directory, opened beneath the mount point.
Result<int> open_snapdir(const SnapshotSource& src, SnapshotLayout& layout) {
  std::string mount = src.mountpoint.empty() ? find_mountpoint(src.share_path) : src.mountpoint;
  std::string why;
  auto l = snapshot_layout(src, mount, &why);
  if (!l) {
    LOG_ERROR("snapshots of %s: %s", src.share_path.c_str(), why.c_str());
    return std::unexpected(NtStatus::ObjectPathNotFound);
  }
  layout = std::move(*l);
  Fd mount_fd(::open(mount.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (mount_fd.get() < 0) return std::unexpected(nt_status_from_errno(errno));
  int fd = open_beneath(mount_fd.get(), layout.snapdir_below_mount.c_str(), O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return std::unexpected(open_beneath_status(fd));
  return fd;
}

bool holds_share(int snapdir_fd, const std::string& name, const SnapshotLayout& layout) {
  int fd = open_beneath(snapdir_fd, join(name, layout.share_in_snapshot).c_str(), O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

}  // namespace

std::optional<int64_t> parse_gmt_token(std::string_view token) {
  if (token.size() != kGmtTokenLength) return std::nullopt;
  return snapshot_name_time(token, kGmtFormat, false);
}

std::string gmt_token(int64_t unix_time) {
  time_t t = time_t(unix_time);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, std::string(kGmtFormat).c_str(), &tm);
  return std::string(buf, n);
}

std::optional<int64_t> take_gmt_token(std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (auto t = parse_gmt_token(std::string_view(path).substr(start, end - start))) {
      size_t from = start > 0 ? start - 1 : start;          // with the '/' before it,
      size_t to = start > 0 ? end : std::min(end + 1, path.size());  // or the one after it
      path.erase(from, to - from);
      return t;
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<int64_t> snapshot_name_time(std::string_view name, std::string_view format, bool localtime) {
  std::string n(name), f(format);
  struct tm tm {};
  const char* end = strptime(n.c_str(), f.c_str(), &tm);
  if (!end || *end != '\0') return std::nullopt;
  tm.tm_isdst = -1;
  time_t t = localtime ? mktime(&tm) : timegm(&tm);
  if (t == time_t(-1)) return std::nullopt;
  return int64_t(t);
}

std::optional<SnapshotLayout> snapshot_layout(const SnapshotSource& src, std::string_view mountpoint,
                                              std::string* why) {
  SnapshotLayout out;
  auto share_below = below(mountpoint, src.share_path);
  if (!share_below) {
    *why = "the share's path is not beneath the mount point " + std::string(mountpoint);
    return std::nullopt;
  }
  if (src.snapdir.starts_with('/')) {
    auto d = below(mountpoint, src.snapdir);
    if (!d) {
      *why = "shadow:snapdir " + src.snapdir + " is not beneath the mount point " + std::string(mountpoint);
      return std::nullopt;
    }
    out.snapdir_below_mount = *d;
  } else {
    out.snapdir_below_mount = src.snapdir;
  }
  if (!src.snapsharepath.empty()) {
    out.share_in_snapshot = src.snapsharepath;
  } else if (!src.basedir.empty()) {
    auto b = below(src.basedir, src.share_path);
    if (!b || !below(mountpoint, src.basedir)) {
      *why = "shadow:basedir " + src.basedir + " is not between the mount point and the share's path";
      return std::nullopt;
    }
    out.share_in_snapshot = *b;
  } else {
    out.share_in_snapshot = *share_below;
  }
  return out;
}

std::vector<Snapshot> list_snapshots(const SnapshotSource& src) {
  std::vector<Snapshot> out;
  SnapshotLayout layout;
  auto fd = open_snapdir(src, layout);
  if (!fd) return out;
  DIR* dir = fdopendir(*fd);
  if (!dir) {
    ::close(*fd);
    return out;
  }
  while (struct dirent* e = readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    auto t = snapshot_name_time(name, src.format, src.localtime);
    if (t && holds_share(dirfd(dir), std::string(name), layout)) out.push_back({*t, std::string(name)});
  }
  closedir(dir);
  std::sort(out.begin(), out.end(), [&](const Snapshot& a, const Snapshot& b) {
    return src.sort_descending ? a.unix_time > b.unix_time : a.unix_time < b.unix_time;
  });
  return out;
}

Result<int> open_snapshot_root(const SnapshotSource& src, int64_t unix_time) {
  SnapshotLayout layout;
  auto fd = open_snapdir(src, layout);
  if (!fd) return std::unexpected(NtStatus::ObjectNameNotFound);
  Fd snapdir(*fd);
  DIR* dir = fdopendir(snapdir.release());
  if (!dir) return std::unexpected(nt_status_from_errno(errno));
  std::optional<std::string> found;
  while (struct dirent* e = readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (snapshot_name_time(name, src.format, src.localtime) == unix_time) {
      found = std::string(name);
      break;
    }
  }
  Result<int> out = std::unexpected(NtStatus::ObjectNameNotFound);
  if (found) {
    int root = open_beneath(dirfd(dir), join(*found, layout.share_in_snapshot).c_str(), O_PATH | O_DIRECTORY, 0);
    out = root >= 0 ? Result<int>(root) : std::unexpected(NtStatus::ObjectPathNotFound);
  }
  closedir(dir);
  return out;
}

}  // namespace ringsmb::vfs
