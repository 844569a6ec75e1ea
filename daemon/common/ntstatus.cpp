#include "common/ntstatus.hpp"

#include <cerrno>
#include <cstdio>

namespace ringsmb {

const char* nt_status_name(NtStatus status) {
  switch (status) {
#define RINGSMB_NTSTATUS_CASE(name, value) \
  case NtStatus::name: return "STATUS_" #name;
    RINGSMB_NTSTATUS_LIST(RINGSMB_NTSTATUS_CASE)
#undef RINGSMB_NTSTATUS_CASE
  }
  static thread_local char buf[32];
  snprintf(buf, sizeof buf, "STATUS_0x%08x", unsigned(status));
  return buf;
}

NtStatus nt_status_from_errno(int err) {
  switch (err) {
    case 0: return NtStatus::Success;
    case EPERM:
    case EACCES: return NtStatus::AccessDenied;
    case ENOENT: return NtStatus::ObjectNameNotFound;
    case ENOTDIR: return NtStatus::ObjectPathNotFound;
    case EISDIR: return NtStatus::FileIsADirectory;
    case EEXIST: return NtStatus::ObjectNameCollision;
    case ENOTEMPTY: return NtStatus::DirectoryNotEmpty;
    case EXDEV: return NtStatus::NotSameDevice;
    case ENOSPC: return NtStatus::DiskFull;
    case EDQUOT: return NtStatus::QuotaExceeded;
    case EROFS: return NtStatus::MediaWriteProtected;
    case ENAMETOOLONG: return NtStatus::NameTooLong;
    case EMFILE:
    case ENFILE: return NtStatus::TooManyOpenedFiles;
    case ENOMEM: return NtStatus::NoMemory;
    case EINVAL: return NtStatus::InvalidParameter;
    case EBADF: return NtStatus::InvalidHandle;
    case ELOOP: return NtStatus::ObjectPathNotFound;     // symlink escaping the share
    case EMLINK: return NtStatus::TooManyLinks;
    case EFBIG: return NtStatus::DiskFull;
    case EOPNOTSUPP: return NtStatus::NotSupported;
    case ENODATA: return NtStatus::NotFound;
    case EAGAIN: return NtStatus::SharingViolation;
    case EBUSY: return NtStatus::SharingViolation;
    case ETXTBSY: return NtStatus::SharingViolation;
    case ENOSYS: return NtStatus::NotSupported;
    case EIO: return NtStatus::Unsuccessful;
    default: return NtStatus::Unsuccessful;
  }
}

}  // namespace ringsmb
