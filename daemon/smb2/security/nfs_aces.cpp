#include "smb2/security/nfs_aces.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "vfs/xattr_io.hpp"

namespace ringsmb::smb2 {
namespace {

namespace nt = vfs::ntacl;

// S-1-5-88 and its three kinds (Samba's global_sid_Unix_NFS_*).
constexpr uint64_t kNtAuthority = 5;
constexpr uint32_t kNfsRid = 88, kNfsUsers = 1, kNfsGroups = 2, kNfsMode = 3;

nt::Sid nfs_sid(uint32_t kind, uint32_t value) {
  nt::Sid s;
  s.authority = kNtAuthority;
  s.sub = {kNfsRid, kind, value};
  return s;
}

bool is_nfs_sid(const nt::Sid& s) { return s.authority == kNtAuthority && !s.sub.empty() && s.sub[0] == kNfsRid; }

nt::Ace nfs_ace(uint32_t kind, uint32_t value) {
  nt::Ace a;
  a.type = nt::ACCESS_DENIED_ACE_TYPE;
  a.mask = 0;
  a.sid = nfs_sid(kind, value);
  return a;
}

}  // namespace

void add_nfs_aces(nt::SecurityDescriptor& sd, const vfs::FileStat& st) {
  if (!sd.dacl) return;  // a NULL DACL stays one
  auto& aces = sd.dacl->aces;
  std::erase_if(aces, [](const nt::Ace& a) { return a.raw.empty() && is_nfs_sid(a.sid); });
  // Samba puts the whole st_mode (type bits too) in the mode SID.
  aces.push_back(nfs_ace(kNfsMode, st.mode));
  aces.push_back(nfs_ace(kNfsUsers, st.uid));
  aces.push_back(nfs_ace(kNfsGroups, st.gid));
}

std::optional<uint32_t> take_nfs_aces(nt::SecurityDescriptor& sd, uint32_t& info) {
  if (!(info & nt::DACL_SECURITY_INFORMATION) || !sd.dacl) return std::nullopt;
  auto& aces = sd.dacl->aces;
  std::optional<uint32_t> mode;
  for (const nt::Ace& a : aces)
    if (!mode && a.raw.empty() && is_nfs_sid(a.sid) && a.sid.sub.size() == 3 && a.sid.sub[1] == kNfsMode)
      mode = a.sid.sub[2] & 0777u;
  const size_t before = aces.size();
  std::erase_if(aces, [](const nt::Ace& a) { return a.raw.empty() && is_nfs_sid(a.sid); });
  if (before != 0 && aces.empty()) info &= ~uint32_t(nt::DACL_SECURITY_INFORMATION);
  return mode;
}

NtStatus apply_nfs_mode(int fd, uint32_t mode) {
  if (chmod(vfs::xattr_io::proc_fd_path(fd).c_str(), mode & 0777u) != 0) return nt_status_from_errno(errno);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
