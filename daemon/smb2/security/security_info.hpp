// NT security descriptors over SMB2: QUERY_INFO / SET_INFO of
// SMB2_0_INFO_SECURITY and the CREATE hooks (the access check on an
// existing file's descriptor, stored or implied by its mode; FILE_ADD_FILE
// on the parent; inheritance into a new file). The descriptors live in
// vfs/ntacl_store.hpp; the decisions are smb2/access_check's.
#pragma once

#include <string_view>

#include "smb2/engine/dispatch.hpp"
#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"

namespace ringsmb::smb2 {

// The SIDs the tree's user holds (docs/security.md, "SIDs"):
// S-1-22-1-<uid> and the machine account SID <machine SID>-<1000 + uid>,
// S-1-22-2-<gid> for the primary and each supplementary group, Everyone,
// and Authenticated Users unless the session is a guest's.
vfs::ntacl::Token user_token(const ServerContext& server, const state::Session& session, const state::Tree& tree);

// QUERY_INFO SMB2_0_INFO_SECURITY (MS-SMB2 3.3.5.20.3, MS-FSA 2.1.5.13).
NtStatus query_security_info(Request& req, state::Open& open, uint32_t additional_info, uint32_t output_length,
                             Bytes& data);
// SET_INFO SMB2_0_INFO_SECURITY (MS-SMB2 3.3.5.21.3, MS-FSA 2.1.5.16).
NtStatus set_security_info(Request& req, state::Open& open, uint32_t additional_info, ByteSpan buf);

// What CREATE learnt about the parent of a new name, for inherit_on_create.
struct ParentSecurity {
  vfs::SharedSd stored;  // null: none stored (or the store is not in use)
};
// Before a new file or directory is made in `parent_fd`: the parent's
// stored descriptor must grant FILE_ADD_FILE (FILE_ADD_SUBDIRECTORY).
// Costs nothing while no descriptor was ever stored.
NtStatus check_create_in_parent(Request& req, int parent_fd, bool directory, ParentSecurity& parent);
// After it was made: its descriptor from the parent's inheritable ACEs
// and the creator's SecD create context (MS-DTYP 2.5.3.4); stored only
// when the mode cannot express it exactly, else applied as a chmod (`st`
// is refreshed then).
NtStatus inherit_on_create(Request& req, int fd, vfs::FileStat& st, const ParentSecurity& parent,
                           ByteSpan create_contexts);
// The rights the mode gives this tree's user on `st` without a stored
// descriptor (vfs::mode_maximal_access: full control for the Unix owner,
// the group and Everyone ACEs for anyone else); all of them for root,
// whom the mode does not bind.
uint32_t mode_access(const Request& req, const vfs::FileStat& st);
// Every right the file's descriptor grants this user (MxAc, MS-SMB2
// 2.2.14.2.5): its stored descriptor's, else mode_access.
uint32_t descriptor_maximal_access(Request& req, int fd, const vfs::FileStat& st);

// An existing file being opened by CREATE, for check_open_access.
struct ExistingOpen {
  int fd = -1;  // the open file (O_PATH when path_only)
  const vfs::FileStat* st = nullptr;
  int parent_fd = -1;  // -1: the fast path did not open the parent
  std::string_view path;
  uint32_t desired_access = 0;
  bool delete_on_close = false;
  bool overwrite = false;  // overwrite or supersede: the data is replaced
  bool path_only = false;  // opened O_PATH: the kernel let the user open it for nothing
};
// MS-DTYP 2.5.3.2 for every open of an existing file: its descriptor
// (stored, else the one its mode implies, mode_access) narrows `access`,
// the result of grant_create_access (apply_allowed_access), DELETE and
// FILE_READ_ATTRIBUTES possibly through the parent. The kernel checks the
// open's data access on top (the open runs with the user's fsuid); an
// O_PATH open, which it did not check, gets nothing the mode does not give
// either. An overwrite must be allowed FILE_WRITE_DATA whatever was asked.
// The Unix owner always keeps READ_CONTROL and WRITE_DAC unless the DACL
// has an OWNER RIGHTS ACE (it could chmod the file anyway); root without a
// stored descriptor is not checked here (the mode does not bind it).
NtStatus check_open_access(Request& req, const ExistingOpen& e, uint32_t& access);

}  // namespace ringsmb::smb2
