// The one place that decides whether an SMB2 request may change a file.
//
// Every operation that modifies data, size, name, existence or metadata
// names its Change here; kChangeRules says which access right of the open
// it needs (MS-SMB2 3.3.5.x, MS-FSA 2.1.5.x, MS-FSCC 2.4). check_change()
// requires that right in the open's granted access AND a writable tree, so
// a read-only share or a `read list` user can change nothing whatever the
// open was granted. CREATE computes the granted access with
// grant_create_access(): MAXIMUM_ALLOWED expands to the tree's maximal
// access (no write, delete or security rights on a read-only tree), and
// FILE_DELETE_ON_CLOSE needs DELETE in the result.
//
// The Unix permissions still apply on top: the operations run with the
// user's file-system identity, and a delete, which is only carried out at
// the last close, is checked against them when it is requested
// (check_unlink_allowed), so that the client hears the refusal.
// docs/security.md ("Access checks") has the table in prose.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/ntstatus.hpp"
#include "smb2/security/access.hpp"
#include "state/session.hpp"
#include "vfs/ntacl.hpp"

namespace ringsmb::smb2 {

enum class Change : uint8_t {
  WriteData,        // WRITE, FLUSH
  EndOfFile,        // SET_INFO FileEndOfFileInformation
  Allocation,       // SET_INFO FileAllocationInformation
  BasicInfo,        // SET_INFO FileBasicInformation (times, attributes)
  Sparse,           // FSCTL_SET_SPARSE
  Delete,           // FILE_DELETE_ON_CLOSE, SET_INFO FileDisposition(Ex)
  Rename,           // SET_INFO FileRename(Ex)
  ExtendedAttributes,  // SET_INFO FileFullEaInformation
  Dacl,             // SET_INFO security, DACL_SECURITY_INFORMATION
  Owner,            // SET_INFO security, OWNER/GROUP_SECURITY_INFORMATION
  CreateName,       // CREATE making a new file or directory
  Overwrite,        // CREATE with FILE_OVERWRITE(_IF) / FILE_SUPERSEDE
  Reparse,          // FSCTL_SET_REPARSE_POINT, FSCTL_DELETE_REPARSE_POINT
};

struct ChangeRule {
  Change change;
  // The open needs at least one of these rights; 0: decided by the tree
  // alone (the CREATE cases, before there is an open).
  uint32_t any_of;
  const char* name;
};

// The table, in Change order (unit tests and docs walk it).
std::span<const ChangeRule> change_rules();
const ChangeRule& change_rule(Change c);

// ACCESS_DENIED unless the tree lets its user change files (IPC$ pipes
// aside: a pipe write is an RPC message, not a change) and the open was
// granted one of the rights the change needs. An open in a snapshot
// changes nothing: MEDIA_WRITE_PROTECTED (NOT_SAME_DEVICE for a new name).
NtStatus check_change(const state::Tree& tree, const state::Open& open, Change c);
// For changes made before an open exists (CREATE making or overwriting a name).
NtStatus check_tree_change(const state::Tree& tree, Change c);

// The access a CREATE is granted (MS-SMB2 3.3.5.9): generic rights mapped,
// MAXIMUM_ALLOWED replaced by the tree's maximal access, explicit rights
// the tree cannot give refused, delete-on-close refused without DELETE.
Result<uint32_t> grant_create_access(const state::Tree& tree, uint32_t desired_access, bool delete_on_close);

// MS-DTYP 2.5.3.2 for an existing file, on top of grant_create_access's
// `granted` (the Unix permissions and the tree still apply: all must
// allow). `allowed` is every right the file's descriptor (stored, or the
// one its mode implies) grants the user, `parent_allowed` what its
// parent's grants (0 when not looked at). Rights asked for by name must
// all be allowed, DELETE also through the parent's FILE_DELETE_CHILD and
// FILE_READ_ATTRIBUTES through its FILE_LIST_DIRECTORY (MS-FSA
// 2.1.5.1.2.1); MAXIMUM_ALLOWED keeps only what is allowed; delete-on-close
// needs DELETE in the result.
Result<uint32_t> apply_allowed_access(uint32_t granted, uint32_t desired_access, uint32_t allowed,
                                      uint32_t parent_allowed, bool delete_on_close);
// The rights of the open the parent could add to `allowed` (see above):
// 0 when its descriptor need not be looked at.
uint32_t rights_wanted_from_parent(uint32_t desired_access, uint32_t allowed);
// MS-FSA 2.1.5.1.2.1, what FILE_ATTRIBUTE_READONLY does to an open of an
// existing data file: asking for FILE_WRITE_DATA or FILE_APPEND_DATA, or
// overwriting it (its data is written), is ACCESS_DENIED; MAXIMUM_ALLOWED
// loses the write rights. The mode of a read-only file has no write bits,
// so the kernel refuses users anyway; root's file-system identity is not
// bound by the mode, which is why this is decided here.
Result<uint32_t> apply_readonly_attribute(uint32_t granted, uint32_t desired_access, bool overwrite);

// A new entry in a directory with a stored descriptor: FILE_ADD_FILE, or
// FILE_ADD_SUBDIRECTORY for a directory, must be granted.
NtStatus check_add_entry(const vfs::ntacl::SecurityDescriptor& parent, const vfs::ntacl::Token& token,
                         bool directory);

// May the file-system identity of this thread remove `leaf` from the
// directory `dir_fd`, as the kernel will decide at the unlink (write and
// search permission on the directory; in a sticky directory, ownership of
// the entry or the directory unless the identity is root)? ACCESS_DENIED
// when not. Asked when a delete is requested, since the unlink itself only
// happens at the last close, where no client can be told it failed.
NtStatus check_unlink_allowed(int dir_fd, const char* leaf);
// The same for a path under the tree's root ("" is the root: CANNOT_DELETE).
NtStatus check_unlink_allowed(const state::Tree& tree, std::string_view path);

}  // namespace ringsmb::smb2
