// Sidecar files of large named streams (see stream_sidecar.hpp).
#include "vfs/stream_sidecar.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "vfs/fd_io.hpp"

namespace ringsmb::vfs {
namespace {

std::atomic<int> g_dir_fd{-1};
std::atomic<bool> g_in_use{false};
SidecarHooks g_hooks;

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

bool directory_has_entries(int dir) {
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
    if (n != "." && n != "..") {
      any = true;
      break;
    }
  }
  closedir(d);
  return any;
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

bool configure_stream_sidecars(const std::string& directory, SidecarHooks hooks) {
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
  g_in_use.store(directory_has_entries(fd), std::memory_order_relaxed);
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
}

Result<SidecarId> sidecar_create(ByteSpan data, uint64_t size) {
  if (!stream_sidecars_enabled()) return Unexpected(NtStatus::DiskFull);
  if (size > uint64_t(INT64_MAX)) return Unexpected(NtStatus::DiskFull);
  SidecarId id{};
  if (getrandom(id.data(), id.size(), 0) != ssize_t(id.size())) return Unexpected(NtStatus::InternalError);
  AsServer as;
  g_in_use.store(true, std::memory_order_relaxed);
  SidecarFd fd(open_sidecar(id, O_RDWR | O_CREAT | O_EXCL));
  if (!fd.ok()) return Unexpected(fd.error());
  NtStatus s = pwrite_all(fd.get(), 0, data);
  if (s == NtStatus::Success && ftruncate(fd.get(), off_t(size)) != 0) s = nt_status_from_errno(errno);
  if (s != NtStatus::Success) {
    unlinkat(g_dir_fd.load(), sidecar_name(id).c_str(), 0);
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
  return pwrite_all(fd.get(), offset, data);
}

NtStatus sidecar_truncate(const SidecarId& id, uint64_t size) {
  if (size > uint64_t(INT64_MAX)) return NtStatus::DiskFull;
  AsServer as;
  SidecarFd fd(open_sidecar(id, O_WRONLY));
  if (!fd.ok()) return fd.error();
  if (ftruncate(fd.get(), off_t(size)) != 0) return nt_status_from_errno(errno);
  return NtStatus::Success;
}

void sidecar_remove(const SidecarId& id) {
  int dir = g_dir_fd.load(std::memory_order_acquire);
  if (dir < 0) return;
  AsServer as;
  unlinkat(dir, sidecar_name(id).c_str(), 0);
}

}  // namespace ringsmb::vfs
