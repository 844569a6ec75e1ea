#include "smb2/security/access_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <string>

#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr ChangeRule kChangeRules[] = {
    {Change::WriteData, FILE_WRITE_DATA | FILE_APPEND_DATA, "write data"},
    {Change::EndOfFile, FILE_WRITE_DATA, "set end of file"},
    {Change::Allocation, FILE_WRITE_DATA, "set allocation size"},
    {Change::BasicInfo, FILE_WRITE_ATTRIBUTES, "set times and attributes"},
    {Change::Sparse, FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_APPEND_DATA, "set sparse"},
    {Change::Delete, DELETE, "delete"},
    {Change::Rename, DELETE, "rename"},
    {Change::ExtendedAttributes, FILE_WRITE_EA, "set extended attributes"},
    {Change::Dacl, WRITE_DAC, "set the DACL"},
    {Change::Owner, WRITE_OWNER, "set owner or group"},
    {Change::CreateName, 0, "create a file or directory"},
    {Change::Overwrite, 0, "overwrite or supersede"},
    // MS-FSA 2.1.5.10.37: FILE_WRITE_DATA or FILE_WRITE_ATTRIBUTES.
    {Change::Reparse, FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES, "set or delete a reparse point"},
};

constexpr bool rules_in_enum_order() {
  for (size_t i = 0; i < std::size(kChangeRules); ++i)
    if (size_t(kChangeRules[i].change) != i) return false;
  return std::size(kChangeRules) == size_t(Change::Reparse) + 1;
}
static_assert(rules_in_enum_order(), "kChangeRules is indexed by Change");

// The thread's file-system uid (setfsuid with an invalid id changes
// nothing and returns the current one).
uint32_t current_fsuid() { return uint32_t(syscall(SYS_setfsuid, -1)); }

}  // namespace

std::span<const ChangeRule> change_rules() { return kChangeRules; }

const ChangeRule& change_rule(Change c) { return kChangeRules[size_t(c)]; }

NtStatus check_tree_change(const state::Tree& tree, Change) {
  return tree.writable || tree.share.is_ipc ? NtStatus::Success : NtStatus::AccessDenied;
}

NtStatus check_change(const state::Tree& tree, const state::Open& open, Change c) {
  // A snapshot is read-only (smb2/snapshots/snapshots.hpp); a new name for
  // its file would be on another volume.
  if (open.snapshot_root)
    return c == Change::Rename || c == Change::CreateName ? NtStatus::NotSameDevice : NtStatus::MediaWriteProtected;
  if (check_tree_change(tree, c) != NtStatus::Success) return NtStatus::AccessDenied;
  const uint32_t needed = change_rule(c).any_of;
  if (needed && !(open.granted_access & needed)) return NtStatus::AccessDenied;
  return NtStatus::Success;
}

Result<uint32_t> grant_create_access(const state::Tree& tree, uint32_t desired_access, bool delete_on_close) {
  uint32_t access = map_generic(desired_access);
  const bool maximum = access & MAXIMUM_ALLOWED;
  access &= ~MAXIMUM_ALLOWED;
  // Rights asked for by name must all be grantable (MAXIMUM_ALLOWED adds
  // to them, it does not excuse them).
  if (access & kWriteLikeAccess & ~tree.maximal_access) return Unexpected(NtStatus::AccessDenied);
  if (maximum) access |= tree.maximal_access;
  if (!tree.writable && !tree.share.is_ipc) access &= ~kWriteLikeAccess;
  // MS-SMB2 3.3.5.9: delete-on-close needs DELETE, which a read-only
  // tree's maximal access never has.
  if (delete_on_close && !(access & DELETE)) return Unexpected(NtStatus::AccessDenied);
  return access;
}

uint32_t rights_wanted_from_parent(uint32_t desired_access, uint32_t allowed) {
  const uint32_t mapped = map_generic(desired_access);
  const uint32_t wanted = (mapped & MAXIMUM_ALLOWED) ? ~0u : mapped;
  return wanted & ~allowed & (DELETE | FILE_READ_ATTRIBUTES);
}

Result<uint32_t> apply_allowed_access(uint32_t granted, uint32_t desired_access, uint32_t allowed,
                                      uint32_t parent_allowed, bool delete_on_close) {
  const uint32_t asked = map_generic(desired_access) & ~MAXIMUM_ALLOWED;
  if (parent_allowed & FILE_DELETE_CHILD) allowed |= DELETE;
  if (parent_allowed & FILE_READ_DATA) allowed |= FILE_READ_ATTRIBUTES;  // FILE_LIST_DIRECTORY
  if (asked & ~allowed) return Unexpected(NtStatus::AccessDenied);
  const uint32_t access = granted & (asked | allowed);
  if (delete_on_close && !(access & DELETE)) return Unexpected(NtStatus::AccessDenied);
  return access;
}

Result<uint32_t> apply_readonly_attribute(uint32_t granted, uint32_t desired_access, bool overwrite) {
  const uint32_t asked = map_generic(desired_access);
  if (overwrite || (asked & (FILE_WRITE_DATA | FILE_APPEND_DATA))) return Unexpected(NtStatus::AccessDenied);
  if (asked & MAXIMUM_ALLOWED) granted &= ~uint32_t(FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_DELETE_CHILD);
  return granted;
}

NtStatus check_add_entry(const vfs::ntacl::SecurityDescriptor& parent, const vfs::ntacl::Token& token,
                         bool directory) {
  const uint32_t needed = directory ? FILE_APPEND_DATA : FILE_WRITE_DATA;  // ADD_SUBDIRECTORY : ADD_FILE
  return vfs::ntacl::access_check(parent, token, needed) ? NtStatus::Success : NtStatus::AccessDenied;
}

NtStatus check_unlink_allowed(int dir_fd, const char* leaf) {
  // Write and search permission on the directory, for this thread's
  // file-system identity (AT_EACCESS: the fsuid, not the real uid). A
  // kernel without faccessat2 leaves the decision to the unlink.
  long r = syscall(SYS_faccessat2, dir_fd, "", W_OK | X_OK, AT_EACCESS | AT_EMPTY_PATH);
  if (r != 0 && errno != ENOSYS && errno != EINVAL) return errno == EROFS ? NtStatus::MediaWriteProtected
                                                                          : NtStatus::AccessDenied;
  const uint32_t uid = current_fsuid();
  if (uid == 0) return NtStatus::Success;  // CAP_FOWNER: the sticky bit does not bind root
  auto dir = vfs::stat_fd(dir_fd);
  if (!dir) return dir.error();
  if (!(dir->mode & S_ISVTX) || dir->uid == uid) return NtStatus::Success;
  auto entry = vfs::stat_at(dir_fd, leaf);
  if (!entry) return entry.error();
  return entry->uid == uid ? NtStatus::Success : NtStatus::AccessDenied;
}

NtStatus check_unlink_allowed(const state::Tree& tree, std::string_view path) {
  std::string_view parent, leaf;
  vfs::split_parent(path, parent, leaf);
  if (leaf.empty()) return NtStatus::CannotDelete;  // the share root
  int dir = vfs::open_beneath(tree.root.get(), parent.empty() ? "." : std::string(parent).c_str(),
                              O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0) return vfs::open_beneath_status(dir);
  NtStatus st = check_unlink_allowed(dir, std::string(leaf).c_str());
  close(dir);
  return st;
}

}  // namespace ringsmb::smb2
