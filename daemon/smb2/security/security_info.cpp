// NT security descriptors over SMB2 (security_info.hpp). docs/security.md
// ("NT security descriptors") explains the model.
#include "smb2/security/security_info.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/log.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "smb2/security/nfs_aces.hpp"
#include "smb2/engine/create_context_chain.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "vfs/security_descriptor.hpp"
#include "vfs/paths.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace nt = vfs::ntacl;
namespace {

constexpr uint32_t kInfoMask = nt::OWNER_SECURITY_INFORMATION | nt::GROUP_SECURITY_INFORMATION |
                               nt::DACL_SECURITY_INFORMATION;

// The owner may be set to a SID that names no Unix user only by a holder of
// SeRestorePrivilege (MS-FSA 2.1.5.17); root is the one user treated as
// holding it (Samba grants root every privilege too). The Unix owner then
// stays, and the descriptor keeps the SID.
bool holds_restore_privilege(const Request& req) { return req.tree->identity.uid == 0; }

int change_mode(int fd, mode_t mode) {
  if (fchmod(fd, mode) == 0) return 0;
  if (errno != EBADF) return errno;
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return fchmodat(AT_FDCWD, proc.c_str(), mode, 0) == 0 ? 0 : errno;
}

// The owner and group as the mode mapping names them, when they name the
// file's Unix owner and group (the machine account SID is the same user).
nt::SecurityDescriptor canonical(const ServerContext& server, nt::SecurityDescriptor sd, const vfs::FileStat& st) {
  if (sd.owner && nt::uid_of(*sd.owner, machine_sid(server)) == st.uid) sd.owner = nt::unix_user_sid(st.uid);
  if (sd.group && nt::gid_of(*sd.group) == st.gid) sd.group = nt::unix_group_sid(st.gid);
  return sd;
}

// Applies the rwx bits the DACL implies, when it has any (mode_from_dacl);
// false when the rwx bits cannot say it.
Result<bool> apply_mode(int fd, vfs::FileStat& st, const nt::SecurityDescriptor& canon) {
  if (!canon.dacl) return false;
  auto mode = vfs::mode_from_dacl(st, nt::serialize_acl(*canon.dacl));
  if (!mode) return false;
  if (*mode != (st.mode & 07777)) {
    if (int err = change_mode(fd, *mode)) return Unexpected(nt_status_from_errno(err));
    st.mode = (st.mode & ~07777u) | *mode;
  }
  return true;
}

// "nt acl support = no": only what the mode and the Unix owner and group
// hold is kept, nothing is stored; a DACL the rwx bits cannot say (a NULL
// DACL, DENY ACEs, other users, ...) or a group that names no Unix group
// is refused rather than pretended (STATUS_NOT_SUPPORTED).
NtStatus settle_mode_only(int fd, vfs::FileStat& st, const nt::SecurityDescriptor& canon) {
  if (canon.group && canon.group != nt::unix_group_sid(st.gid)) return NtStatus::NotSupported;
  auto applied = apply_mode(fd, st, canon);
  if (!applied) return applied.error();
  return *applied ? NtStatus::Success : NtStatus::NotSupported;
}

// Keeps the mode in step with the DACL where the rwx bits can say it, then
// stores the descriptor unless the mode now says exactly the same. A file
// this request just made holds no attribute yet: then nothing is removed
// either (no syscall beyond the chmod).
NtStatus settle(Request& req, int fd, vfs::FileStat& st, const nt::SecurityDescriptor& sd, bool created = false) {
  ServerContext& server = req.server;
  nt::SecurityDescriptor canon = canonical(server, sd, st);
  if (!req.tree->share.nt_acl_support) return settle_mode_only(fd, st, canon);
  if (auto applied = apply_mode(fd, st, canon); !applied) return applied.error();
  const bool exact = nt::exact_mode(st, canon).has_value();
  if (exact && !server.ntacls.in_use()) return NtStatus::Success;  // nothing stored anywhere yet
  if (!exact && server.ntacls.needs_marking()) {
    become_root();  // the state directory is root's
    server.ntacls.mark_in_use();
    become_user(req.tree->identity);
  }
  if (exact && created) {
    server.ntacls.remember(st, nullptr);
    return NtStatus::Success;
  }
  auto stored = exact ? vfs::SharedSd{} : std::make_shared<const nt::SecurityDescriptor>(sd);
  int err = server.ntacls.store(fd, st, stored);
  if (err == 0) return NtStatus::Success;
  LOG_WARN("storing the security descriptor on share [%s]: %s", req.tree->share.name.c_str(), strerror(err));
  // Without CAP_SYS_ADMIN or trusted xattrs nothing but the mode can be
  // kept: refuse rather than pretend (docs/security.md).
  return err == EPERM || err == ENOTSUP ? NtStatus::NotSupported : nt_status_from_errno(err);
}

// Owner and group changes become a chown where they name Unix ids; the
// kernel decides whether this user may (only root gives files away).
NtStatus change_owner(Request& req, int fd, vfs::FileStat& st, const nt::SecurityDescriptor& want, uint32_t info) {
  uid_t uid = uid_t(-1);
  gid_t gid = gid_t(-1);
  if ((info & nt::OWNER_SECURITY_INFORMATION) && want.owner) {
    auto u = nt::uid_of(*want.owner, machine_sid(req.server));
    // A SID without a Unix user can only live in a stored descriptor, and
    // only a SID the user holds (a group, Everyone) or, with
    // SeRestorePrivilege, any; the Unix owner stays.
    const bool may_name =
        holds_restore_privilege(req) || user_token(req.server, *req.session, *req.tree).has(*want.owner);
    if (!u && !(may_name && req.tree->share.nt_acl_support)) return NtStatus::InvalidOwner;
    if (u && *u != st.uid) uid = *u;
  }
  if ((info & nt::GROUP_SECURITY_INFORMATION) && want.group) {
    auto g = nt::gid_of(*want.group);
    if (g && *g != st.gid) gid = *g;
  }
  if (uid == uid_t(-1) && gid == gid_t(-1)) return NtStatus::Success;
  if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH) != 0)
    return errno == EPERM ? (uid != uid_t(-1) ? NtStatus::InvalidOwner : NtStatus::AccessDenied)
                          : nt_status_from_errno(errno);
  auto again = vfs::stat_fd(fd);
  if (!again) return again.error();
  st = *again;
  return NtStatus::Success;
}

// The creator's descriptor from an SMB2_CREATE_SD_BUFFER ("SecD", MS-SMB2
// 2.2.13.2.2), if any.
Result<std::optional<nt::SecurityDescriptor>> creator_descriptor(ByteSpan contexts) {
  std::optional<ByteSpan> secd;
  bool ok = for_each_create_context(contexts, [&](const CreateContext& c) {
    if (c.name == wire::create_context::kSdBuffer) secd = c.data;
  });
  if (!ok) return Unexpected(NtStatus::InvalidParameter);
  if (!secd) return std::optional<nt::SecurityDescriptor>{};
  auto sd = nt::parse(*secd);
  if (!sd) return Unexpected(NtStatus::InvalidParameter);
  if (sd->dacl) nt::map_generic_aces(*sd->dacl);
  return std::optional<nt::SecurityDescriptor>(std::move(*sd));
}

}  // namespace

NtStatus query_security_info(Request& req, state::Open& open, uint32_t additional_info, uint32_t output_length,
                             bool nfs_aces, Bytes& data) {
  // MS-FSA 2.1.5.13: the SACL needs ACCESS_SYSTEM_SECURITY, which CREATE
  // never grants (PRIVILEGE_NOT_HELD); the rest READ_CONTROL.
  if ((additional_info & nt::SACL_SECURITY_INFORMATION) && !(open.granted_access & ACCESS_SYSTEM_SECURITY))
    return NtStatus::AccessDenied;
  if ((additional_info & kInfoMask) && !(open.granted_access & READ_CONTROL)) return NtStatus::AccessDenied;
  auto st = vfs::stat_fd(open.fd.get());
  if (!st) return st.error();
  nt::SecurityDescriptor sd = descriptor_of(req, open.fd.get(), *st);
  if (nfs_aces) add_nfs_aces(sd, *st);
  data = nt::serialize(sd, additional_info & kInfoMask);
  if (data.size() > output_length) return NtStatus::BufferTooSmall;
  return NtStatus::Success;
}

NtStatus set_security_info(Request& req, state::Open& open, uint32_t info, ByteSpan buf, bool nfs_aces) {
  // MS-FSA 2.1.5.16: without ACCESS_SYSTEM_SECURITY the SACL is refused.
  if (info & nt::SACL_SECURITY_INFORMATION) return NtStatus::AccessDenied;
  if (info & (nt::OWNER_SECURITY_INFORMATION | nt::GROUP_SECURITY_INFORMATION))
    if (NtStatus s = check_change(*req.tree, open, Change::Owner); s != NtStatus::Success) return s;
  if (info & nt::DACL_SECURITY_INFORMATION)
    if (NtStatus s = check_change(*req.tree, open, Change::Dacl); s != NtStatus::Success) return s;
  auto want = nt::parse(buf);
  if (!want) return want.error();
  std::optional<uint32_t> nfs_mode;
  if (nfs_aces) nfs_mode = take_nfs_aces(*want, info);
  if ((info & kInfoMask) == 0) return nfs_mode ? apply_nfs_mode(open.fd.get(), *nfs_mode) : NtStatus::Success;
  const int fd = open.fd.get();
  auto st = vfs::stat_fd(fd);
  if (!st) return st.error();
  nt::SecurityDescriptor next = descriptor_of(req, fd, *st);
  if (NtStatus s = change_owner(req, fd, *st, *want, info); s != NtStatus::Success) return s;
  if ((info & nt::OWNER_SECURITY_INFORMATION) && want->owner) next.owner = want->owner;
  if ((info & nt::GROUP_SECURITY_INFORMATION) && want->group) next.group = want->group;
  if (info & nt::DACL_SECURITY_INFORMATION) {
    // No DACL, or SE_DACL_PRESENT without one: a NULL DACL, which grants
    // everyone everything and reads back as present without a DACL
    // (smb2.create.nulldacl).
    next.dacl = want->dacl;
    next.control = uint16_t(nt::SE_SELF_RELATIVE | nt::SE_DACL_PRESENT);
    if (next.dacl) {
      next.control |= nt::stored_dacl_control(want->control, req.tree->share.acl_flag_inherited_canonicalization);
      nt::map_generic_aces(*next.dacl);
    }
  }
  NtStatus s = settle(req, fd, *st, next);
  if (s == NtStatus::Success && nfs_mode) s = apply_nfs_mode(fd, *nfs_mode);
  return s;
}

NtStatus check_create_in_parent(Request& req, int parent_fd, bool directory, ParentSecurity& parent) {
  if (!stored_descriptors(req)) return NtStatus::Success;
  auto st = vfs::stat_fd(parent_fd);
  if (!st) return st.error();
  parent.stored = req.server.ntacls.lookup(parent_fd, *st);
  if (!parent.stored) return NtStatus::Success;
  nt::SecurityDescriptor sd = in_step(req.server, *parent.stored, *st);
  return check_add_entry(sd, user_token(req.server, *req.session, *req.tree), directory);
}

NtStatus inherit_on_create(Request& req, int fd, vfs::FileStat& st, const ParentSecurity& parent,
                           ByteSpan create_contexts) {
  auto creator = creator_descriptor(create_contexts);
  if (!creator) return creator.error();
  if (!parent.stored && !*creator) return NtStatus::Success;  // the common case: the mode says it all
  if (*creator && (*creator)->dacl) {
    auto& c = **creator;
    c.control = uint16_t((c.control & ~(nt::SE_DACL_AUTO_INHERITED | nt::SE_DACL_AUTO_INHERIT_REQ)) |
                         nt::stored_dacl_control(c.control, req.tree->share.acl_flag_inherited_canonicalization));
  }
  const nt::Sid owner = nt::unix_user_sid(st.uid), group = nt::unix_group_sid(st.gid);
  nt::SecurityDescriptor made = nt::create_descriptor(parent.stored.get(), *creator ? &**creator : nullptr,
                                                      st.is_directory, owner, group, nt::from_mode(st).dacl);
  // Another user as the owner needs a privilege nobody holds here; a SID
  // without a Unix user, SeRestorePrivilege (root's, and only where it can
  // be stored). Otherwise the creator owns the file (the Unix owner).
  if (made.owner) {
    auto uid = nt::uid_of(*made.owner, machine_sid(req.server));
    const bool may_keep = uid ? *uid == st.uid : holds_restore_privilege(req) && req.tree->share.nt_acl_support;
    if (!may_keep) made.owner = owner;
  }
  if (made.group && nt::gid_of(*made.group).value_or(st.gid) != st.gid) made.group = group;
  NtStatus s = settle(req, fd, st, made, true);
  // Without stored descriptors a creator's DACL the mode cannot say is not
  // kept: the file is made with what the mode says, as before descriptors
  // were stored (docs/security.md).
  if (s == NtStatus::NotSupported && !req.tree->share.nt_acl_support) return NtStatus::Success;
  return s;
}

}  // namespace ringsmb::smb2
