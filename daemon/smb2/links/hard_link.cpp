// FileLinkInformation(Ex): a hard link to the open's file (smb2/links/hard_link.hpp).
#include "smb2/links/hard_link.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>

#include "smb2/files/share_options.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {


struct LinkRequest {
  bool replace = false;
  std::string path;  // the new name, relative to the share root
};

NtStatus read_request(Request& req, ByteSpan buf, bool ex, LinkRequest& out) {
  auto change = vfs::read_name_change(buf, ex);
  if (!change) return change.error();
  out.replace = change->replace;
  auto target = vfs::parse_smb_path(change->name);
  if (!target) return target.error();
  if (!target->stream.empty() || target->path.empty()) return NtStatus::InvalidParameter;
  if (vetoes_anything(req.tree->share))
    if (NtStatus v = veto_status(req.tree->share, target->path); v != NtStatus::Success) return v;
  out.path = req.tree->share.case_sensitive
                 ? target->path
                 : vfs::resolve_case_insensitive(req.server.names, req.tree->root.get(), target->path);
  return NtStatus::Success;
}

// Some client holds (dev, ino) open, or its delete is pending.
bool held_open(ServerContext& server, uint64_t dev, uint64_t ino) {
  static const char probe = 0;
  auto node = server.files.open(dev, ino, &probe, 0, 7);  // no access, shares all: never conflicts
  if (!node) return true;
  bool used = server.files.open_count(*node) > 1;
  server.files.close(*node, &probe);
  return used;
}

// linkat under a temporary name, then renamed over the old file: a client
// never sees the name missing.
NtStatus link_replacing(int src_dir, const std::string& src_leaf, int dst_dir, const std::string& dst_leaf) {
  std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string tmp = ".ringsmb-link-" + std::to_string(rng());
    if (linkat(src_dir, src_leaf.c_str(), dst_dir, tmp.c_str(), 0) != 0) {
      if (errno == EEXIST) continue;
      return nt_status_from_errno(errno);
    }
    if (renameat(dst_dir, tmp.c_str(), dst_dir, dst_leaf.c_str()) == 0) return NtStatus::Success;
    const int err = errno;
    unlinkat(dst_dir, tmp.c_str(), 0);
    return nt_status_from_errno(err);
  }
  return NtStatus::ObjectNameCollision;
}

state::UniqueFd open_dir(int root, std::string_view path) {
  int fd = vfs::open_beneath(root, path.empty() ? "." : std::string(path).c_str(), O_PATH | O_DIRECTORY, 0);
  return state::UniqueFd(fd < 0 ? -1 : fd);
}

}  // namespace

NtStatus set_hard_link(Request& req, state::Open& open, ByteSpan buf, bool ex) {
  LinkRequest q;
  if (NtStatus st = read_request(req, buf, ex, q); st != NtStatus::Success) return st;
  if (open.is_directory) return NtStatus::FileIsADirectory;
  if (open.stream || open.path.empty()) return NtStatus::InvalidParameter;
  std::string_view from_parent, from_leaf, to_parent, to_leaf;
  vfs::split_parent(open.path, from_parent, from_leaf);
  vfs::split_parent(q.path, to_parent, to_leaf);
  const int root = req.tree->root.get();
  state::UniqueFd src_dir = open_dir(root, from_parent);
  state::UniqueFd dst_dir = open_dir(root, to_parent);
  if (!src_dir || !dst_dir) return NtStatus::ObjectPathNotFound;
  const std::string src_leaf(from_leaf), dst_leaf(to_leaf);
  auto src = vfs::stat_fd(open.fd.get());
  if (!src) return src.error();
  auto existing = vfs::stat_at(dst_dir.get(), dst_leaf.c_str());
  if (existing) {
    if (existing->device == src->device && existing->file_id == src->file_id) return NtStatus::Success;
    if (!q.replace) return NtStatus::ObjectNameCollision;
    if (existing->is_directory) return NtStatus::AccessDenied;
    if (held_open(req.server, existing->device, existing->file_id)) return NtStatus::AccessDenied;
  } else if (existing.error() != NtStatus::ObjectNameNotFound) {
    return existing.error();
  }
  auto change = req.server.names.begin_change(dst_dir.get());
  NtStatus st = NtStatus::Success;
  if (existing) st = link_replacing(src_dir.get(), src_leaf, dst_dir.get(), dst_leaf);
  else if (linkat(src_dir.get(), src_leaf.c_str(), dst_dir.get(), dst_leaf.c_str(), 0) != 0)
    st = errno == EXDEV ? NtStatus::NotSameDevice : nt_status_from_errno(errno);
  if (st != NtStatus::Success) {
    change.unchanged();
    return st;
  }
  change.added(dst_leaf);
  break_directory_leases(req.server, dst_dir.get(), dst_leaf, req.conn.client_guid, nullptr);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
