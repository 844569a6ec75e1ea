// What a file's security grants the tree's user (descriptor_access.hpp).
// docs/security.md ("NT security descriptors") explains the model.
#include "smb2/security/descriptor_access.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "rpc/interface.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "vfs/paths.hpp"
#include "vfs/security_descriptor.hpp"

namespace ringsmb::smb2 {
namespace nt = vfs::ntacl;
namespace {

bool is_root(const Request& req) { return req.tree->identity.uid == 0; }

vfs::ModeRole mode_role(const ipc::UnixUser& u, const vfs::FileStat& st) {
  const bool in_group = u.gid == st.gid || std::find(u.groups.begin(), u.groups.end(), st.gid) != u.groups.end();
  return {u.uid == st.uid, in_group};
}

// Every right the stored descriptor of the file (when there is one:
// `stored` is set) or else its mode grants this user. The owner whose
// implicit rights the check gives is the Unix owner, whatever SID the
// descriptor names (Everyone, say, which every token holds).
uint32_t file_access(Request& req, int fd, const vfs::FileStat& st, bool& stored) {
  stored = false;
  if (stored_descriptors(req))
    if (vfs::SharedSd sd = req.server.ntacls.lookup(fd, st)) {
      stored = true;
      nt::SecurityDescriptor checked = *sd;
      checked.owner = nt::unix_user_sid(st.uid);
      return nt::maximal_access(checked, user_token(req.server, *req.session, *req.tree));
    }
  return mode_access(req, st);
}

// What the parent's descriptor grants this user, for DELETE through
// FILE_DELETE_CHILD; 0 for the share root or when it cannot be opened.
uint32_t parent_access(Request& req, int parent_fd, std::string_view path) {
  state::UniqueFd opened;
  if (parent_fd < 0) {
    std::string_view parent, leaf;
    vfs::split_parent(path, parent, leaf);
    if (leaf.empty()) return 0;
    int fd = vfs::open_beneath(req.tree->root.get(), parent.empty() ? "." : std::string(parent).c_str(),
                               O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    opened.reset(fd);
    parent_fd = fd;
  }
  auto st = vfs::stat_fd(parent_fd);
  if (!st) return 0;
  bool stored = false;
  return file_access(req, parent_fd, *st, stored);
}


// faccessat2 with AT_EACCESS checks the thread's filesystem identity (the
// session user's fsuid), which is what the file's data would be checked
// against; AT_EMPTY_PATH makes it check the fd itself.
int access_fd(int fd, int mode) {
#ifdef SYS_faccessat2
  if (syscall(SYS_faccessat2, fd, "", mode, AT_EACCESS | AT_EMPTY_PATH) == 0) return 0;
  return errno;
#else
  (void)fd, (void)mode;
  return ENOSYS;
#endif
}

}  // namespace

// The machine domain SID (rpc::derive_machine_sid), once per thread and name.
const nt::Sid& machine_sid(const ServerContext& server) {
  thread_local std::string name;
  thread_local nt::Sid sid;
  if (sid.sub.empty() || name != server.config.global.netbios_name) {
    name = server.config.global.netbios_name;
    rpc::Sid r = rpc::derive_machine_sid(name);
    sid = nt::Sid{r.revision, r.authority, r.sub};
  }
  return sid;
}

// The stored owner and group follow the Unix ones where they name Unix
// ids: a local chown wins over what the descriptor remembers.
nt::SecurityDescriptor in_step(const ServerContext& server, nt::SecurityDescriptor sd, const vfs::FileStat& st) {
  if (sd.owner) {
    auto uid = nt::uid_of(*sd.owner, machine_sid(server));
    if (uid && *uid != st.uid) sd.owner = nt::unix_user_sid(st.uid);
  }
  if (sd.group) {
    auto gid = nt::gid_of(*sd.group);
    if (gid && *gid != st.gid) sd.group = nt::unix_group_sid(st.gid);
  }
  return sd;
}

// Whether descriptors are read and stored on this tree's share: not with
// "nt acl support = no" (the mode alone), and not before this server ever
// stored one (vfs/ntacl_store.hpp: nothing to read, nothing read).
bool stored_descriptors(const Request& req) {
  return req.tree->share.nt_acl_support && req.server.ntacls.in_use();
}

// The descriptor of a file: the stored one, else what its mode implies.
nt::SecurityDescriptor descriptor_of(Request& req, int fd, const vfs::FileStat& st) {
  if (stored_descriptors(req))
    if (vfs::SharedSd stored = req.server.ntacls.lookup(fd, st)) return in_step(req.server, *stored, st);
  return nt::from_mode(st);
}

nt::Token user_token(const ServerContext& server, const state::Session& session, const state::Tree& tree) {
  const ipc::UnixUser& u = tree.identity;
  nt::Token t;
  t.sids.push_back(nt::unix_user_sid(u.uid));
  if (u.uid <= UINT32_MAX - nt::kMachineRidBase) {
    nt::Sid account = machine_sid(server);
    account.sub.push_back(nt::kMachineRidBase + u.uid);
    t.sids.push_back(std::move(account));
  }
  t.sids.push_back(nt::unix_group_sid(u.gid));
  for (uint32_t g : u.groups)
    if (g != u.gid) t.sids.push_back(nt::unix_group_sid(g));
  t.sids.insert(t.sids.end(), tree.windows_sids.begin(), tree.windows_sids.end());
  t.sids.push_back(nt::world_sid());
  if (!session.is_guest && !session.is_anonymous) t.sids.push_back(nt::authenticated_users_sid());
  return t;
}

uint32_t mode_access(const Request& req, const vfs::FileStat& st) {
  if (is_root(req)) return nt::kFileAllAccess;
  return vfs::mode_maximal_access(st, mode_role(req.tree->identity, st));
}

uint32_t descriptor_maximal_access(Request& req, int fd, const vfs::FileStat& st) {
  bool stored = false;
  return file_access(req, fd, st, stored);
}

NtStatus check_open_access(Request& req, const ExistingOpen& e, uint32_t& access) {
  bool stored = false;
  uint32_t allowed = file_access(req, e.fd, *e.st, stored);
  if (!stored && is_root(req)) return NtStatus::Success;
  if (e.path_only && stored) allowed &= mode_access(req, *e.st);
  if (e.overwrite && !(allowed & FILE_WRITE_DATA)) return NtStatus::AccessDenied;
  uint32_t from_parent = 0;
  if (rights_wanted_from_parent(e.desired_access, allowed)) from_parent = parent_access(req, e.parent_fd, e.path);
  auto result = apply_allowed_access(access, e.desired_access, allowed, from_parent, e.delete_on_close);
  if (!result) return result.error();
  access = *result;
  return NtStatus::Success;
}


NtStatus check_stream_writable(Request& req, int fd, const vfs::FileStat& st) {
  if (int err = access_fd(fd, W_OK)) return nt_status_from_errno(err);
  if (!(descriptor_maximal_access(req, fd, st) & FILE_WRITE_DATA)) return NtStatus::AccessDenied;
  return NtStatus::Success;
}

NtStatus check_stream_readable(int fd) {
  if (int err = access_fd(fd, R_OK)) return nt_status_from_errno(err);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
