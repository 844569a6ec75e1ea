// NT security descriptors over SMB2: QUERY_INFO / SET_INFO of
// SMB2_0_INFO_SECURITY and the CREATE hooks (FILE_ADD_FILE on the parent;
// inheritance into a new file). The descriptors live in
// vfs/ntacl_store.hpp; what one grants is smb2/security/descriptor_access's,
// the decisions smb2/security/access_check's.
#pragma once

#include <string_view>

#include "smb2/engine/dispatch.hpp"
#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"

namespace ringsmb::smb2 {

// QUERY_INFO SMB2_0_INFO_SECURITY (MS-SMB2 3.3.5.20.3, MS-FSA 2.1.5.13).
// With `nfs_aces` (smb2/security/nfs_aces.hpp; the caller knows whether
// the connection asked for them) the DACL carries the file's owner, group
// and mode as NFS ACEs.
NtStatus query_security_info(Request& req, state::Open& open, uint32_t additional_info, uint32_t output_length,
                             bool nfs_aces, Bytes& data);
// SET_INFO SMB2_0_INFO_SECURITY (MS-SMB2 3.3.5.21.3, MS-FSA 2.1.5.16).
// With `nfs_aces`, NFS ACEs in the DACL set are taken out and a mode ACE
// among them becomes the file's permission bits.
NtStatus set_security_info(Request& req, state::Open& open, uint32_t additional_info, ByteSpan buf, bool nfs_aces);

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

}  // namespace ringsmb::smb2
