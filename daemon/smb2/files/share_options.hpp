// Per-share options the data plane applies to file operations (create mask,
// directory mask, veto files, hide dot files). Each check costs nothing
// when the share does not configure it: the hot CREATE path calls these.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "ipc/control_plane.hpp"
#include "state/session.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"

namespace ringsmb::smb2 {

// Samba's mode for a new file or directory: 0666 / 0777 AND-ed with the
// share's create mask / directory mask.
inline mode_t new_file_mode(const ipc::ShareInfo& share) { return mode_t(0666 & share.create_mask); }
inline mode_t new_dir_mode(const ipc::ShareInfo& share) { return mode_t(0777 & share.directory_mask); }

// open(O_CREAT)/mkdir apply the process umask; the masks are what the
// admin asked for, so bits the umask removed are put back with fchmod.
// Only costs a syscall when the umask actually removed something.
void restore_masked_mode(int fd, mode_t wanted);

// Whether `path` (relative, '/'-separated) may be opened under the share's
// veto files: OBJECT_NAME_NOT_FOUND when its last component is vetoed,
// OBJECT_PATH_NOT_FOUND when a directory on the way is, else Success.
NtStatus veto_status(const ipc::ShareInfo& share, std::string_view path);
inline bool vetoes_anything(const ipc::ShareInfo& share) { return !share.veto_files.empty(); }
// True when the single name `leaf` is vetoed on this share.
bool is_vetoed_name(const ipc::ShareInfo& share, std::string_view leaf);

// The DOS attributes reported for a file: what follows from its mode,
// HIDDEN for dot files under "hide dot files", and under "store dos
// attributes" what user.DOSATTRIB holds (one getxattr, only then). `fd` is
// the file's own descriptor; the _at form names it inside directory `dirfd`.
uint32_t reported_attributes(const ipc::ShareInfo& share, const vfs::FileStat& st, std::string_view name, int fd);
uint32_t reported_attributes_at(const ipc::ShareInfo& share, const vfs::FileStat& st, int dirfd, std::string_view name);

// Under "store dos attributes": keeps HIDDEN, SYSTEM and ARCHIVE of `attrs`
// in user.DOSATTRIB of the file open as `fd`. The caller has checked that
// the open may write attributes; the xattr is written with the daemon's
// identity, as Samba does, because user.* xattrs otherwise need write
// permission on the file data. A filesystem without user xattrs is not an
// error (the attributes are then simply not kept).
NtStatus store_dos_attributes(const state::Tree& tree, int fd, uint32_t attrs);

// The attributes of a file made by CREATE under "store dos attributes":
// what the client asked for, with ARCHIVE for a file as Windows adds it
// (MS-FSA 2.1.5.1.2.1). Written only when the mode does not already imply
// them (a plain new file reads ARCHIVE from its mode), so the common create
// costs no xattr write.
void store_new_file_attributes(const state::Tree& tree, int fd, const vfs::FileStat& st, uint32_t requested);

// What a client is told about an existing file beyond statx and the DOS
// attributes: the times and the sparse flag of vfs/file_meta.hpp (one
// getxattr). `st.attributes` must already be the reported attributes.
void apply_stored_metadata(vfs::FileStat& st, int fd);
void apply_stored_metadata_at(vfs::FileStat& st, int dirfd, std::string_view name);
// The same for an open file: no getxattr when its node knows the file's
// metadata (state::FileNode::meta_state: none for a file this server made
// or one whose getxattr through an open of the node found none; what this
// server stored through one of its opens); a getxattr that finds none
// teaches the node.
vfs::FileMeta stored_meta(const state::Open& open);
void apply_stored_metadata(vfs::FileStat& st, const state::Open& open);
// Stores META as OPEN's file's metadata (vfs::write_file_meta: 0 or an
// errno). Its node forgets what it knew, both before and after the write
// (a reader that looked in between learns nothing), and then knows META
// when no other write went through the node meanwhile.
int write_stored_meta(const state::Open& open, const vfs::FileMeta& meta);

}  // namespace ringsmb::smb2
