// The UNIX owner, group and mode in a security descriptor, as macOS reads
// and sets them on a server that offers NFS ACEs (AAPL's SUPPORTS_NFS_ACE,
// fruit:nfs_aces), the way Samba's vfs_fruit does: three access-denied ACEs
// with an empty mask whose SIDs carry the numbers (the "MS NFS" SIDs
// Windows' Services for NFS uses):
//   S-1-5-88-1-<uid>, S-1-5-88-2-<gid>, S-1-5-88-3-<mode>.
// When they are on is fruit's to say (fruit::nfs_aces_on: AAPL negotiated
// on a fruit share with fruit:nfs_aces); then they are added to every DACL
// read, a DACL set has them taken out again, and a mode ACE in it changes
// the file's permission bits (chmod) after the DACL is stored
// (smb2/security/security_info.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "common/ntstatus.hpp"
#include "vfs/file_info.hpp"
#include "vfs/ntacl.hpp"

namespace ringsmb::smb2 {

// Replaces any NFS ACEs of `sd`'s DACL with the file's own (`st`).
void add_nfs_aces(vfs::ntacl::SecurityDescriptor& sd, const vfs::FileStat& st);

// Takes the NFS ACEs out of the DACL a client sets. Returns the permission
// bits (0777) of its mode ACE, if it had one. A DACL left empty that was
// not empty before means "no DACL change": DACL leaves `info`.
std::optional<uint32_t> take_nfs_aces(vfs::ntacl::SecurityDescriptor& sd, uint32_t& info);

// chmod of the file open as `fd` (an O_PATH fd too) to `mode`'s permission bits.
NtStatus apply_nfs_mode(int fd, uint32_t mode);

}  // namespace ringsmb::smb2
