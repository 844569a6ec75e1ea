// Sidecar files of large named streams (see stream_sidecar.hpp).
#include "vfs/stream_sidecar.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <unordered_map>

#include "vfs/fd_io.hpp"

namespace ringsmb::vfs {
namespace {

std::atomic<int> g_dir_fd{-1};
std::atomic<bool> g_in_use{false};
SidecarHooks g_hooks;

// What the sidecars of each owner hold (the sum of their sizes: a sparse
// sidecar counts what it can grow into without another request), and the
// bound on it. A change is charged before it is made and corrected to what
// the file then is, so two writers of one owner cannot both slip under
// the bound.
class OwnerUsage {
 public:
  void reset(uint64_t limit) {
    std::lock_guard lock(mu_);
    bytes_.clear();
    limit_ = limit;
  }
  // Charges `uid` for a sidecar going from `from` to `to` bytes; false (and
  // nothing charged) when that growth would pass the bound.
  bool charge(uint32_t uid, uint64_t from, uint64_t to) {
    std::lock_guard lock(mu_);
    uint64_t& used = bytes_[uid];
    if (to > from && limit_ && (to - from > limit_ || used > limit_ - (to - from))) return false;
    used = to >= from ? used + (to - from) : used - std::min(used, from - to);
    return true;
  }
  // The same without the bound: what was charged is corrected.
  void correct(uint32_t uid, uint64_t charged, uint64_t actual) {
    std::lock_guard lock(mu_);
    uint64_t& used = bytes_[uid];
    used = actual >= charged ? used + (actual - charged) : used - std::min(used, charged - actual);
  }
  uint64_t of(uint32_t uid) {
    std::lock_guard lock(mu_);
    auto it = bytes_.find(uid);
    return it == bytes_.end() ? 0 : it->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint32_t, uint64_t> bytes_;  // guarded by mu_
  uint64_t limit_ = 0;                            // guarded by mu_; 0: none
};
OwnerUsage g_usage;

// The hooks around one sidecar operation.
class AsServer {
 public:
  AsServer() {
    if (g_hooks.enter) g_hooks.enter();
  }
  ~AsServer() {
    if (g_hooks.leave) g_hooks.leave();
  }
  AsServer(const AsServer&) = delete;
  AsServer& operator=(const AsServer&) = delete;
};

// Opens the sidecar (as the server); -errno on failure.
int open_sidecar(const SidecarId& id, int flags) {
  int dir = g_dir_fd.load(std::memory_order_acquire);
  if (dir < 0) return -ENOENT;
  int fd = openat(dir, sidecar_name(id).c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600);
  return fd < 0 ? -errno : fd;
}

class SidecarFd {
 public:
  explicit SidecarFd(int fd) : fd_(fd) {}
  ~SidecarFd() {
    if (fd_ >= 0) close(fd_);
  }
  SidecarFd(const SidecarFd&) = delete;
  SidecarFd& operator=(const SidecarFd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  NtStatus error() const { return fd_ == -ENOENT ? NtStatus::ObjectNameNotFound : nt_status_from_errno(-fd_); }

 private:
  int fd_;
};

// Counts what the sidecars in `dir` hold, per owner; whether there are any.
bool count_sidecars(int dir) {
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return true;  // cannot tell: assume some
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return true;
  }
  bool any = false;
  while (struct dirent* de = readdir(d)) {
    std::string_view n(de->d_name);
    if (n == "." || n == "..") continue;
    any = true;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      g_usage.correct(st.st_uid, 0, uint64_t(st.st_size));
  }
  closedir(d);
  return any;
}

// The size of the open sidecar and its owner; false when fstat fails.
bool size_and_owner(int fd, uint64_t& size, uint32_t& uid) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  size = uint64_t(st.st_size);
  uid = st.st_uid;
  return true;
}

// After a change charged as `charged` bytes failed: charges what the
// sidecar now is instead.
void correct_after_failure(int fd, uint32_t uid, uint64_t charged) {
  uint64_t size = charged;
  uint32_t owner = uid;
  if (size_and_owner(fd, size, owner)) g_usage.correct(uid, charged, size);
}

}  // namespace

std::string sidecar_name(const SidecarId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(id.size() * 2);
  for (uint8_t b : id) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

bool configure_stream_sidecars(const std::string& directory, SidecarHooks hooks, uint64_t max_bytes_per_owner) {
  if (mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return false;
  int fd = open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st;
  // Only the server may reach it: a directory another user could enter or
  // write to would let them read or plant stream data.
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
    close(fd);
    return false;
  }
  g_hooks = hooks;
  g_usage.reset(max_bytes_per_owner);
  g_in_use.store(count_sidecars(fd), std::memory_order_relaxed);
  int old = g_dir_fd.exchange(fd, std::memory_order_acq_rel);
  if (old >= 0) close(old);
  return true;
}

bool stream_sidecars_enabled() { return g_dir_fd.load(std::memory_order_acquire) >= 0; }
bool stream_sidecars_in_use() { return g_in_use.load(std::memory_order_relaxed); }

void reset_stream_sidecars() {
  int old = g_dir_fd.exchange(-1, std::memory_order_acq_rel);
  if (old >= 0) close(old);
  g_hooks = {};
  g_in_use.store(false, std::memory_order_relaxed);
  g_usage.reset(0);
}

uint64_t sidecar_bytes_of(uint32_t uid) { return g_usage.of(uid); }

Result<SidecarId> sidecar_create(ByteSpan data, uint64_t size, SidecarOwner owner) {
  if (!stream_sidecars_enabled()) return Unexpected(NtStatus::DiskFull);
  if (size > uint64_t(INT64_MAX)) return Unexpected(NtStatus::DiskFull);
  SidecarId id{};
  if (getrandom(id.data(), id.size(), 0) != ssize_t(id.size())) return Unexpected(NtStatus::InternalError);
  if (!g_usage.charge(owner.uid, 0, size)) return Unexpected(NtStatus::DiskFull);
  AsServer as;
  g_in_use.store(true, std::memory_order_relaxed);
  SidecarFd fd(open_sidecar(id, O_RDWR | O_CREAT | O_EXCL));
  if (!fd.ok()) {
    g_usage.correct(owner.uid, size, 0);
    return Unexpected(fd.error());
  }
  // The owner's before any data: the data is charged to their quota.
  NtStatus s = fchown(fd.get(), owner.uid, owner.gid) == 0 ? NtStatus::Success : nt_status_from_errno(errno);
  if (s == NtStatus::Success) s = pwrite_all(fd.get(), 0, data);
  if (s == NtStatus::Success && ftruncate(fd.get(), off_t(size)) != 0) s = nt_status_from_errno(errno);
  if (s != NtStatus::Success) {
    unlinkat(g_dir_fd.load(), sidecar_name(id).c_str(), 0);
    g_usage.correct(owner.uid, size, 0);
    return Unexpected(s);
  }
  return id;
}

Result<uint64_t> sidecar_size(const SidecarId& id) {
  AsServer as;
  SidecarFd fd(open_sidecar(id, O_PATH));
  if (!fd.ok()) return Unexpected(fd.error());
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Unexpected(nt_status_from_errno(errno));
  return uint64_t(st.st_size);
}

Result<Bytes> sidecar_read(const SidecarId& id, uint64_t offset, size_t length) {
  AsServer as;
  SidecarFd fd(open_sidecar(id, O_RDONLY));
  if (!fd.ok()) return Unexpected(fd.error());
  Bytes out(length);
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd.get(), out.data() + got, length - got, off_t(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unexpected(nt_status_from_errno(errno));
    }
    if (n == 0) break;
    got += size_t(n);
  }
  out.resize(got);
  return out;
}

NtStatus sidecar_write(const SidecarId& id, uint64_t offset, ByteSpan data) {
  if (offset > uint64_t(INT64_MAX) - data.size()) return NtStatus::DiskFull;
  AsServer as;
  SidecarFd fd(open_sidecar(id, O_WRONLY));
  if (!fd.ok()) return fd.error();
  uint64_t size = 0;
  uint32_t uid = 0;
  if (!size_and_owner(fd.get(), size, uid)) return nt_status_from_errno(errno);
  const uint64_t grown = std::max<uint64_t>(size, offset + data.size());
  if (!g_usage.charge(uid, size, grown)) return NtStatus::DiskFull;
  NtStatus s = pwrite_all(fd.get(), offset, data);
  if (s != NtStatus::Success) correct_after_failure(fd.get(), uid, grown);
  return s;
}

NtStatus sidecar_truncate(const SidecarId& id, uint64_t size) {
  if (size > uint64_t(INT64_MAX)) return NtStatus::DiskFull;
  AsServer as;
  SidecarFd fd(open_sidecar(id, O_WRONLY));
  if (!fd.ok()) return fd.error();
  uint64_t before = 0;
  uint32_t uid = 0;
  if (!size_and_owner(fd.get(), before, uid)) return nt_status_from_errno(errno);
  if (!g_usage.charge(uid, before, size)) return NtStatus::DiskFull;
  if (ftruncate(fd.get(), off_t(size)) != 0) {
    const NtStatus s = nt_status_from_errno(errno);
    correct_after_failure(fd.get(), uid, size);
    return s;
  }
  return NtStatus::Success;
}

void sidecar_remove(const SidecarId& id) {
  int dir = g_dir_fd.load(std::memory_order_acquire);
  if (dir < 0) return;
  AsServer as;
  const std::string name = sidecar_name(id);
  struct stat st;
  const bool known = fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (unlinkat(dir, name.c_str(), 0) == 0 && known) g_usage.correct(st.st_uid, uint64_t(st.st_size), 0);
}

}  // namespace ringsmb::vfs
