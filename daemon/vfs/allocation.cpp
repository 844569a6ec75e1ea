#include "vfs/allocation.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>

namespace ringsmb::vfs {
namespace {

constexpr uint64_t kStatBlockSize = 512;  // st_blocks unit

bool leaves_disk_headroom(int fd, uint64_t size, const struct stat& st) {
  struct statvfs fs;
  if (fstatvfs(fd, &fs) != 0) return true;  // no figures: let fallocate decide
  uint64_t block = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
  uint64_t free_bytes = uint64_t(fs.f_bavail) * block;
  uint64_t headroom = uint64_t(fs.f_blocks) * block / 20;
  uint64_t allocated = uint64_t(st.st_blocks) * kStatBlockSize;
  uint64_t more = size > allocated ? size - allocated : 0;
  return more + headroom <= free_bytes;
}

}  // namespace

NtStatus reserve_allocation(int fd, uint64_t size) {
  struct stat st;
  if (fstat(fd, &st) != 0) return nt_status_from_errno(errno);
  if (size <= uint64_t(st.st_blocks) * kStatBlockSize) return NtStatus::Success;
  if (!leaves_disk_headroom(fd, size, st)) return NtStatus::DiskFull;
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(size)) != 0) {
    if (errno == EOPNOTSUPP || errno == ENOSYS) return NtStatus::Success;  // a hint only
    if (errno == ENOSPC) return NtStatus::DiskFull;
    return nt_status_from_errno(errno);
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::vfs
