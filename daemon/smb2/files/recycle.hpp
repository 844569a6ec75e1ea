// The recycle bin (Samba's vfs_recycle, with its options and meanings: see
// config::RecycleConfig and docs/home-shares-and-recycle.md). The last close
// of a file with delete pending moves it into the share's repository by one
// rename instead of unlinking it: as the deleting user (the caller runs
// with their identity), within the share (every directory is opened
// beneath the share root, never through a symlink), never across file
// systems (a rename only; EXDEV deletes as before).
//
// What is not moved (a directory, a stream, a file in the bin already, an
// excluded name or directory, a size outside minsize..maxsize, a failed
// move) is the caller's to delete as before; a failed move is logged.
#pragma once

#include <string_view>

#include "config/config.hpp"
#include "vfs/name_index.hpp"

namespace ringsmb::smb2 {

enum class RecycleOutcome {
  Moved,     // the file is in the bin
  NotMoved,  // delete it as before (not for the bin, or the move failed)
};

// PATH: the file's path under the share root (ROOT_FD); PARENT_FD: its
// directory, LEAF: its name there.
// A file counts as in the bin already when its path starts with the
// repository's, compared without case (as Windows clients name it).
RecycleOutcome move_to_recycle_bin(vfs::NameIndexCache& names, int root_fd, int parent_fd, std::string_view path,
                                   std::string_view leaf, const config::RecycleConfig& recycle);

}  // namespace ringsmb::smb2
