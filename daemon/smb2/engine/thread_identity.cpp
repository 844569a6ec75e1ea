#include "smb2/engine/thread_identity.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <optional>

namespace ringsmb::smb2 {
namespace {

struct ThreadIdentity {
  bool known = false;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
};
thread_local ThreadIdentity t_current;

bool running_as_root() {
  static const bool root = geteuid() == 0;
  return root;
}

void apply(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& groups) {
  // Order matters: groups and gid while fsuid is still 0 (setgroups needs
  // CAP_SETGID in the effective set, which a nonzero fsuid does not drop,
  // but keep the privileged steps first anyway).
  syscall(SYS_setfsuid, 0);
  syscall(SYS_setgroups, groups.size(), groups.data());
  syscall(SYS_setfsgid, gid);
  syscall(SYS_setfsuid, uid);
  t_current = {true, uid, gid, groups};
}

}  // namespace

void become_user(const ipc::UnixUser& user) {
  if (!running_as_root()) return;
  if (t_current.known && t_current.uid == user.uid && t_current.gid == user.gid && t_current.groups == user.groups)
    return;
  apply(user.uid, user.gid, user.groups);
}

void become_root() {
  if (!running_as_root()) return;
  if (t_current.known && t_current.uid == 0 && t_current.gid == 0 && t_current.groups.empty()) return;
  apply(0, 0, {});
}

RestoreIdentity::RestoreIdentity() : known_(t_current.known) {
  saved_ = {t_current.uid, t_current.gid, t_current.groups};
}

RestoreIdentity::~RestoreIdentity() {
  if (known_) become_user(saved_);
}

namespace {
thread_local std::optional<RestoreIdentity> t_before_server_work;
}  // namespace

void enter_server_identity() {
  t_before_server_work.emplace();
  become_root();
}

void leave_server_identity() { t_before_server_work.reset(); }

}  // namespace ringsmb::smb2
