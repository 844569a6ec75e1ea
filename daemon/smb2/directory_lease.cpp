#include "smb2/directory_lease.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "smb2/lease.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {

void break_directory_leases(ServerContext& server, int dirfd, const state::Guid& client,
                            const state::Guid* parent_key) {
  if (!server.files.directory_leases_held() || dirfd < 0) return;
  auto st = vfs::stat_fd(dirfd);
  if (!st) return;  // the change happened; a directory we cannot stat has no lease we could find
  post_breaks(server, server.files.break_directory(st->device, st->file_id, client, parent_key, monotonic_ms(),
                                                   server.lease_break_timeout_ms));
}

void break_parent_directory_leases(ServerContext& server, int root_fd, const std::string& path,
                                   const state::Guid& client, const state::Guid* parent_key) {
  if (!server.files.directory_leases_held() || path.empty()) return;  // the share root has no parent here
  std::string_view parent, leaf;
  vfs::split_parent(path, parent, leaf);
  int dir = vfs::open_beneath(root_fd, parent.empty() ? "." : std::string(parent).c_str(),
                              O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0) return;
  break_directory_leases(server, dir, client, parent_key);
  close(dir);
}

const state::Guid* parent_lease_key(const state::Open& open) {
  if (!open.lease || open.lease->is_oplock || !open.lease->has_parent) return nullptr;
  return &open.lease->parent_key;
}

}  // namespace ringsmb::smb2
