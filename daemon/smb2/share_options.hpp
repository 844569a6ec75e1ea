// Per-share options the data plane applies to file operations (create mask,
// directory mask, veto files, hide dot files). Each check costs nothing
// when the share does not configure it: the hot CREATE path calls these.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "ipc/control_plane.hpp"

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

}  // namespace ringsmb::smb2
