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

// The mount point, opened, and where the share lies in a snapshot.
Result<int> open_mount(const SnapshotSource& src, SnapshotLayout& layout) {
  std::string mount = src.mountpoint.empty() ? find_mountpoint(src.share_path) : src.mountpoint;
  std::string why;
  auto l = snapshot_layout(src, mount, &why);
  if (!l) {
    LOG_ERROR("snapshots of %s: %s", src.share_path.c_str(), why.c_str());
    return std::unexpected(NtStatus::ObjectPathNotFound);
  }
  layout = std::move(*l);
  int fd = ::open(mount.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(nt_status_from_errno(errno));
  return fd;
}

// A snapshot directory's top (relative to the mount point) and its time.
struct Found {
  int64_t unix_time = 0;
  std::string top;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// snapper's <N>/info.xml: "<date>YYYY-MM-DD HH:MM:SS</date>", in UTC.
std::optional<int64_t> snapper_time(int dir_fd, const std::string& number) {
  Fd fd(open_beneath(dir_fd, join(number, "info.xml").c_str(), O_RDONLY, 0));
  if (fd.get() < 0) return std::nullopt;
  char buf[4096];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  std::string_view xml(buf, size_t(n));
  size_t start = xml.find("<date>"), end = xml.find("</date>");
  if (start == std::string_view::npos || end == std::string_view::npos || end < start) return std::nullopt;
  start += 6;
  return snapshot_name_time(xml.substr(start, end - start), "%Y-%m-%d %H:%M:%S", false);
}

// The entries of one snapshot directory (DIR, relative to the mount
// point) named by the format, and with SNAPPER also snapper's numbered
// <N>/snapshot directories.
void scan_snapdir(int mount_fd, const std::string& dir, const SnapshotSource& src, bool snapper,
                  std::vector<Found>& out) {
  int fd = open_beneath(mount_fd, dir.c_str(), O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (auto t = snapshot_name_time(name, src.format, src.localtime)) out.push_back({*t, join(dir, name)});
    else if (snapper && all_digits(name))
      if (auto st = snapper_time(dirfd(d), name)) out.push_back({*st, join(join(dir, name), "snapshot")});
  }
  closedir(d);
}

// Every snapshot the source names, holding the share or not: those of the
// configured directory, or, without one, what snapper (.snapshots/<N>/
// snapshot), shadow_copy2's default (.snapshots/<format>) and ZFS
// (.zfs/snapshot/<format>) leave at the mount point.
std::vector<Found> find_snapshots(int mount_fd, const SnapshotSource& src, const SnapshotLayout& layout) {
  std::vector<Found> out;
  if (!layout.snapdir_below_mount.empty()) {
    scan_snapdir(mount_fd, layout.snapdir_below_mount, src, false, out);
    return out;
  }
  scan_snapdir(mount_fd, ".snapshots", src, true, out);
  scan_snapdir(mount_fd, ".zfs/snapshot", src, false, out);
  return out;
}

int open_share_copy(int mount_fd, const Found& f, const SnapshotLayout& layout) {
  return open_beneath(mount_fd, join(f.top, layout.share_in_snapshot).c_str(), O_PATH | O_DIRECTORY, 0);
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
  auto mount = open_mount(src, layout);
  if (!mount) return out;
  Fd mount_fd(*mount);
  for (Found& f : find_snapshots(mount_fd.get(), src, layout)) {
    Fd copy(open_share_copy(mount_fd.get(), f, layout));
    if (copy.get() >= 0) out.push_back({f.unix_time, std::move(f.top)});
  }
  std::stable_sort(out.begin(), out.end(), [&](const Snapshot& a, const Snapshot& b) {
    return src.sort_descending ? a.unix_time > b.unix_time : a.unix_time < b.unix_time;
  });
  // Two layouts may hold the same time: the first found stays.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Snapshot& a, const Snapshot& b) { return a.unix_time == b.unix_time; }),
            out.end());
  return out;
}

Result<int> open_snapshot_root(const SnapshotSource& src, int64_t unix_time) {
  SnapshotLayout layout;
  auto mount = open_mount(src, layout);
  if (!mount) return std::unexpected(NtStatus::ObjectNameNotFound);
  Fd mount_fd(*mount);
  bool named = false;
  for (const Found& f : find_snapshots(mount_fd.get(), src, layout)) {
    if (f.unix_time != unix_time) continue;
    named = true;
    int root = open_share_copy(mount_fd.get(), f, layout);
    if (root >= 0) return root;
  }
  return std::unexpected(named ? NtStatus::ObjectPathNotFound : NtStatus::ObjectNameNotFound);
}

}  // namespace ringsmb::vfs
