// Linux disk quotas of the file system a descriptor lies on (quotactl_fd,
// Linux 5.14 and later; the descriptor may be O_PATH): what SMB2 reports
// as a user's free space, as FILE_QUOTA_INFORMATION entries and as the
// volume's quota flags (smb2/quota/).
//
// Only user quotas (USRQUOTA) are read and set: Windows keeps one quota per
// account SID, and that is what a Linux user quota is. Group and project
// quotas still bound what a user can write (the kernel enforces them) but
// are not reported.
#pragma once

#include <cstdint>
#include <optional>

#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

// Whether the file system keeps user quotas (usage tracked) and enforces
// their limits; nullopt when it has none (not enabled, or a file system
// without quota support).
struct QuotaState {
  bool tracked = false;
  bool enforced = false;
};
std::optional<QuotaState> user_quota_state(int fd);

// A user's usage and limits in bytes; a limit of 0 means none.
struct UserQuota {
  uint64_t used_bytes = 0;
  uint64_t soft_limit_bytes = 0;
  uint64_t hard_limit_bytes = 0;
};
// NotSupported on a file system without user quotas.
Result<UserQuota> get_user_quota(int fd, uint32_t uid);
// The first user at or after FROM_UID that has a quota entry (usage or
// limits; Q_GETNEXTQUOTA), or nullopt when there is none.
struct UserQuotaEntry {
  uint32_t uid = 0;
  UserQuota quota;
};
std::optional<UserQuotaEntry> next_user_quota(int fd, uint32_t from_uid);
// Sets both block limits (rounded down to the kernel's 1 KiB quota blocks;
// a limit below one block but above 0 becomes one block, so that it never
// turns into "no limit"). The usage and the inode limits stay.
NtStatus set_user_quota(int fd, uint32_t uid, uint64_t soft_limit_bytes, uint64_t hard_limit_bytes);

// Free space as a user's quota leaves it, in allocation units of
// `unit_bytes`, as Samba's default dfree reports it: the soft limit (the
// hard one when no soft one is set) is the disk's size and what is left
// below it the free space, each at most the file system's own. Unchanged
// without a limit for that user.
struct SpaceUnits {
  uint64_t total = 0;
  uint64_t available = 0;
};
SpaceUnits narrow_to_quota(SpaceUnits fs, const UserQuota& q, uint64_t unit_bytes);

}  // namespace ringsmb::vfs
