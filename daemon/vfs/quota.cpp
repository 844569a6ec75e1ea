// Linux user quotas through quotactl_fd (vfs/quota.hpp).
#include "vfs/quota.hpp"

#include <linux/dqblk_xfs.h>
#include <linux/quota.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ringsmb::vfs {
namespace {

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443  // x86_64 and the other architectures of the common syscall table
#endif

constexpr uint64_t kQuotaBlockBytes = QIF_DQBLKSIZE;  // the unit of dqblk's block limits

long quotactl_fd(int fd, int cmd, uint32_t id, void* addr) {
  return syscall(SYS_quotactl_fd, fd, QCMD(cmd, USRQUOTA), id, addr);
}

// No quotas on this file system (off, or never supported): these errors.
bool means_no_quotas(int err) {
  return err == ESRCH || err == ENOSYS || err == ENOTSUP || err == EINVAL || err == ENOENT;
}

uint64_t to_blocks(uint64_t bytes) {
  if (bytes == 0) return 0;
  return std::max<uint64_t>(1, bytes / kQuotaBlockBytes);
}

// if_dqblk or if_nextdqblk (the same fields and the id).
template <typename Dqblk>
UserQuota from_dqblk(const Dqblk& q) {
  UserQuota out;
  if (q.dqb_valid & QIF_SPACE) out.used_bytes = q.dqb_curspace;
  if (q.dqb_valid & QIF_BLIMITS) {
    out.soft_limit_bytes = q.dqb_bsoftlimit * kQuotaBlockBytes;
    out.hard_limit_bytes = q.dqb_bhardlimit * kQuotaBlockBytes;
  }
  return out;
}

}  // namespace

std::optional<QuotaState> user_quota_state(int fd) {
  struct fs_quota_stat qs = {};
  qs.qs_version = FS_QSTAT_VERSION;
  if (quotactl_fd(fd, Q_XGETQSTAT, 0, &qs) != 0) return std::nullopt;
  QuotaState s;
  s.tracked = qs.qs_flags & FS_QUOTA_UDQ_ACCT;
  s.enforced = qs.qs_flags & FS_QUOTA_UDQ_ENFD;
  if (!s.tracked && !s.enforced) return std::nullopt;
  return s;
}

Result<UserQuota> get_user_quota(int fd, uint32_t uid) {
  struct if_dqblk q = {};
  if (quotactl_fd(fd, Q_GETQUOTA, uid, &q) != 0)
    return Unexpected(means_no_quotas(errno) ? NtStatus::NotSupported : nt_status_from_errno(errno));
  return from_dqblk(q);
}

std::optional<UserQuotaEntry> next_user_quota(int fd, uint32_t from_uid) {
  struct if_nextdqblk q = {};
  if (quotactl_fd(fd, Q_GETNEXTQUOTA, from_uid, &q) != 0) return std::nullopt;  // ENOENT: no more
  return UserQuotaEntry{q.dqb_id, from_dqblk(q)};
}

NtStatus set_user_quota(int fd, uint32_t uid, uint64_t soft_limit_bytes, uint64_t hard_limit_bytes) {
  struct if_dqblk q = {};
  q.dqb_bsoftlimit = to_blocks(soft_limit_bytes);
  q.dqb_bhardlimit = to_blocks(hard_limit_bytes);
  q.dqb_valid = QIF_BLIMITS;
  if (quotactl_fd(fd, Q_SETQUOTA, uid, &q) != 0)
    return means_no_quotas(errno) ? NtStatus::NotSupported : nt_status_from_errno(errno);
  return NtStatus::Success;
}

SpaceUnits narrow_to_quota(SpaceUnits fs, const UserQuota& q, uint64_t unit_bytes) {
  const uint64_t limit_bytes = q.soft_limit_bytes ? q.soft_limit_bytes : q.hard_limit_bytes;
  if (limit_bytes == 0 || unit_bytes == 0) return fs;
  const uint64_t limit_units = limit_bytes / unit_bytes;
  const uint64_t used_units = (q.used_bytes + unit_bytes - 1) / unit_bytes;
  const uint64_t left_units = used_units >= limit_units ? 0 : limit_units - used_units;
  return {std::min(fs.total, limit_units), std::min(fs.available, left_units)};
}

}  // namespace ringsmb::vfs
