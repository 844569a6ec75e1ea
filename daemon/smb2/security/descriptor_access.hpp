// What a file's security grants the tree's user: the SIDs the user holds,
// the file's descriptor (stored, else the one its mode implies) and the
// rights it gives; the access checks built on them, for an open of an
// existing file and for a stream's data. Everything that reads a
// descriptor to decide goes through here; smb2/security/security_info
// (QUERY_INFO / SET_INFO and the CREATE hooks) and the features that
// report or need rights (fruit's listings, streams) build on it.
#pragma once

#include <string_view>

#include "smb2/engine/dispatch.hpp"
#include "vfs/file_info.hpp"
#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"

namespace ringsmb::smb2 {

// The SIDs the tree's user holds (docs/security.md, "SIDs"):
// S-1-22-1-<uid> and the machine account SID <machine SID>-<1000 + uid>,
// S-1-22-2-<gid> for the primary and each supplementary group, Everyone,
// and Authenticated Users unless the session is a guest's.
vfs::ntacl::Token user_token(const ServerContext& server, const state::Session& session, const state::Tree& tree);

// The machine domain SID (rpc::derive_machine_sid), once per thread and name.
const vfs::ntacl::Sid& machine_sid(const ServerContext& server);

// Whether descriptors are read and stored on this tree's share: not with
// "nt acl support = no" (the mode alone), and not before this server ever
// stored one (vfs/ntacl_store.hpp: nothing to read, nothing read).
bool stored_descriptors(const Request& req);
// The stored owner and group follow the Unix ones where they name Unix
// ids: a local chown wins over what the descriptor remembers.
vfs::ntacl::SecurityDescriptor in_step(const ServerContext& server, vfs::ntacl::SecurityDescriptor sd,
                                       const vfs::FileStat& st);
// The descriptor of a file: the stored one, else what its mode implies.
vfs::ntacl::SecurityDescriptor descriptor_of(Request& req, int fd, const vfs::FileStat& st);

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

// A stream's data is its file's data, and the trusted.* attributes that
// hold it are not checked against the file's permissions by the kernel:
// the server asks. May this thread's identity (the session user's) write
// the data of the file open as `fd` (stat `st`)? The kernel decides for
// the mode and POSIX ACLs (faccessat2 on the fd with the thread's fsuid),
// and a stored NT descriptor must grant FILE_WRITE_DATA. Creating,
// overwriting, renaming and deleting a stream need it (NTFS checks them
// against the file's security), and so does converting an AppleDouble
// file into streams. ACCESS_DENIED if not.
NtStatus check_stream_writable(Request& req, int fd, const vfs::FileStat& st);
// The same for reading (the mode's read permission).
NtStatus check_stream_readable(int fd);

}  // namespace ringsmb::smb2
