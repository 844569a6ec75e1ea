// SET_INFO FileRenameInformation(Ex) (MS-FSA 2.1.5.14.11; MS-FSCC
// 2.4.42): the rename itself, and the handle-caching breaks a rename
// waits for first (smb2/commands/set_info.cpp runs both).
#include "smb2/commands/set_info_rename.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "smb2/engine/async_engine.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/fruit/aapl.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/security/access.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2 {
namespace {

// renameat2 with `flags`, falling back to renameat where RENAME_NOREPLACE
// is not supported (the caller checked the target is absent).
NtStatus rename_entry(int src_dir, const std::string& src_leaf, int dst_dir, const std::string& dst_leaf,
                      unsigned flags) {
  if (renameat2(src_dir, src_leaf.c_str(), dst_dir, dst_leaf.c_str(), flags) == 0) return NtStatus::Success;
  const int err = errno;
  if (err == EEXIST) return NtStatus::ObjectNameCollision;
  if (err != EINVAL || flags != RENAME_NOREPLACE) return nt_status_from_errno(err);
  if (renameat(src_dir, src_leaf.c_str(), dst_dir, dst_leaf.c_str()) != 0) return nt_status_from_errno(errno);
  return NtStatus::Success;
}

state::UniqueFd open_dir(int root, std::string_view path) {
  int fd = vfs::open_beneath(root, path.empty() ? "." : std::string(path).c_str(), O_PATH | O_DIRECTORY, 0);
  return state::UniqueFd(fd < 0 ? -1 : fd);
}

// Is some open of (dev, ino) held anywhere in the server, or delete pending?
bool file_in_use(ServerContext& server, uint64_t dev, uint64_t ino) {
  static const char probe = 0;
  auto node = server.files.open(dev, ino, &probe, 0, 7);  // no access, shares all: never conflicts
  if (!node) return true;  // delete pending
  bool used = server.files.open_count(*node) > 1;
  server.files.close(*node, &probe);
  return used;
}

// Windows renames a file through an internal open of the parent directory
// that asks for FILE_ADD_FILE and shares read and write but not delete; an
// existing open of that directory with DELETE access, or one that does not
// share write, makes the rename fail with SHARING_VIOLATION
// (smb2.rename.share_delete_and_delete_access, no_share_delete_but_delete_access).
// The same check here is a probe against the share-mode table. Not for a
// directory's rename: a directory renamed inside one that a client holds
// open with DELETE access (a CHANGE_NOTIFY watcher:
// smb2.notify-inotify.inotify-rename) is renamed, as Samba does.
NtStatus check_parent_sharing(ServerContext& server, int dir_fd) {
  auto st = vfs::stat_fd(dir_fd);
  if (!st) return st.error();
  static const char probe = 0;
  constexpr uint32_t FILE_SHARE_READ = 1, FILE_SHARE_WRITE = 2;
  auto node = server.files.open(st->device, st->file_id, &probe, FILE_WRITE_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE);
  if (!node) return node.error();
  server.files.close(*node, &probe);
  return NtStatus::Success;
}

// This connection's opens below directory `dir` (of DIR_OPEN's tree).
std::vector<state::Open*> opens_below(const Request& req, const state::Open& dir_open, const std::string& dir) {
  std::vector<state::Open*> below;
  for (const auto& [id, o] : req.conn.tables->opens) {
    if (o.get() == &dir_open || o->tree_id != dir_open.tree_id) continue;
    if (o->path.size() > dir.size() && o->path.starts_with(dir) && o->path[dir.size()] == '/') below.push_back(o.get());
  }
  return below;
}

// Points this connection's opens below `from` at `to`.
void update_open_paths(Request& req, const state::Open& renamed, const std::string& from, const std::string& to) {
  for (auto& [id, o] : req.conn.tables->opens) {
    if (o->tree_id != renamed.tree_id || o->session_id != renamed.session_id) continue;
    if (o->path == from) {
      o->path = to;
    } else if (renamed.is_directory && o->path.size() > from.size() && o->path.starts_with(from) &&
               o->path[from.size()] == '/') {
      o->path = to + o->path.substr(from.size());
    }
  }
}

// A rename withdrawn while it waits (CANCEL, the handle's CLOSE, the
// session's end) stops waiting for the breaks; the breaks go on.
NtStatus withdraw_rename(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason) {
  server.files.drop_waiter(w.node, {conn.address, w.async_id});
  return NtStatus::Cancelled;
}

// The handles below a directory being renamed (this connection's opens,
// as set_rename sees them). MS-FSA 2.1.5.14.11 with 2.1.4.12 and the
// oplock rules for an ancestor's rename: every lease with handle caching
// on a file or directory below loses H and the rename waits for that, so
// that handles only a lease keeps open (the Linux client's deferred closes
// and cached directories) can be closed by their holder first; Windows and
// Samba do the same for the rename of a file. An open below with no
// handle caching is a handle the client really holds: the rename is
// refused at once (ACCESS_DENIED, as Windows), breaking nothing. WAITER
// (when the request may wait) is registered on one node whose break is
// out, WAITS_ON; the rename runs again when that break ends and then
// waits, if need be, for the next.
NtStatus break_handles_below(Request& req, const state::Open& open, const state::Waiter* waiter,
                             std::shared_ptr<state::FileNode>& waits_on) {
  std::vector<state::Open*> below = opens_below(req, open, open.path);
  auto& files = req.server.files;
  for (const state::Open* o : below)
    if (!o->node || !files.handle_cached(o->node, o)) return NtStatus::AccessDenied;
  // A break that times out leaves its handle without H: the next run
  // refuses the rename at once, so one timeout ends the wait for all.
  const int64_t now = monotonic_ms();
  for (const state::Open* o : below) {
    bool wait = false;
    post_breaks(req.server,
                files.break_handles_for_rename(o->node, nullptr, now, req.server.lease_break_timeout_ms,
                                               waits_on ? nullptr : waiter, req.async_id != 0, wait),
                req.conn);
    if (wait) waits_on = o->node;
  }
  return NtStatus::Success;
}

// A rename's request (MS-FSCC 2.4.42): whether it may replace an
// existing file, and the new name (relative to the share, no stream).
struct RenameRequest {
  bool replace = false;
  vfs::SmbPath target;
};

NtStatus read_rename(Request& req, ByteSpan buf, bool ex, RenameRequest& out) {
  auto change = vfs::read_name_change(buf, ex);
  if (!change) return change.error();
  out.replace = change->replace;
  ByteSpan name = change->name;
  if (name[0] == ':' && name[1] == 0) return NtStatus::NotSupported;  // stream rename: no named streams
  auto target = vfs::parse_smb_path(name);
  if (!target) return target.error();
  if (!target->stream.empty()) return NtStatus::NotSupported;
  if (target->path.empty()) return NtStatus::ObjectNameInvalid;
  if (vetoes_anything(req.tree->share))  // no renaming a file into invisibility
    if (NtStatus v = veto_status(req.tree->share, target->path); v != NtStatus::Success) return v;
  out.target = std::move(*target);
  return NtStatus::Success;
}

// What cannot be renamed at all: the share root, a file another open does
// not share delete with, a file with open streams (Windows:
// smb2.streams.basefile-rename-with-open-stream).
NtStatus check_renamable(Request& req, const state::Open& open) {
  if (open.path.empty()) return NtStatus::AccessDenied;
  if (open.node && !req.server.files.others_share_delete(open.node, &open)) return NtStatus::SharingViolation;
  if (open.node && req.tree->streams && req.server.files.has_open_streams(open.node)) return NtStatus::AccessDenied;
  return NtStatus::Success;
}

// Where a rename goes: the two names, their directories and leaves.
struct RenamePlace {
  std::string from, to;
  std::string_view from_parent, to_parent;  // within from and to
  state::UniqueFd src_dir, dst_dir;
  std::string src_leaf, dst_leaf;
  unsigned flags = RENAME_NOREPLACE;
  bool replaces = false;   // an existing target goes
  bool same_name = false;  // the target is the file's own name: nothing to do
};

NtStatus locate_rename(Request& req, const state::Open& open, const vfs::SmbPath& target, RenamePlace& p) {
  int root = req.tree->root.get();
  bool cs = req.tree->share.case_sensitive;
  p.to = cs ? target.path : vfs::resolve_case_insensitive(req.server.names, root, target.path);
  // A short name in the target may stand for a vetoed name (smb2/commands/create_open.hpp, Target::vetoed).
  if (p.to != target.path && vetoes_anything(req.tree->share))
    if (NtStatus v = veto_status(req.tree->share, p.to); v != NtStatus::Success) return v;
  p.from = open.path;
  std::string_view from_leaf, to_leaf;
  vfs::split_parent(p.from, p.from_parent, from_leaf);
  vfs::split_parent(p.to, p.to_parent, to_leaf);
  p.src_dir = open_dir(root, p.from_parent);
  if (!p.src_dir) return NtStatus::ObjectPathNotFound;
  p.dst_dir = open_dir(root, p.to_parent);
  if (!p.dst_dir) return NtStatus::ObjectPathNotFound;
  p.src_leaf = std::string(from_leaf);
  p.dst_leaf = std::string(to_leaf);
  return NtStatus::Success;
}

// Windows refuses to rename a directory while files below it are open;
// those only a lease kept open were broken and waited for already
// (break_handles_before_rename). Only this connection's opens are
// visible here. macOS expects POSIX's rename instead, and Samba's
// fruit:posix_rename gives it once AAPL is negotiated. A file's directories
// must allow the rename's internal open.
NtStatus check_rename_sharing(Request& req, const state::Open& open, const RenamePlace& p) {
  if (open.is_directory)
    return fruit::posix_rename(req) || opens_below(req, open, p.from).empty() ? NtStatus::Success
                                                                              : NtStatus::AccessDenied;
  if (NtStatus s = check_parent_sharing(req.server, p.src_dir.get()); s != NtStatus::Success) return s;
  if (p.to_parent != p.from_parent) return check_parent_sharing(req.server, p.dst_dir.get());
  return NtStatus::Success;
}

// What is at the target: nothing, this very file under another case, or
// another file, replaced only when asked and not in use.
NtStatus check_rename_target(Request& req, const state::Open& open, const vfs::SmbPath& target, bool replace,
                             RenamePlace& p) {
  auto src_st = vfs::stat_fd(open.fd.get());
  if (!src_st) return src_st.error();
  auto existing = vfs::stat_at(p.dst_dir.get(), p.dst_leaf.c_str());
  if (existing && existing->device == src_st->device && existing->file_id == src_st->file_id) {
    // The target is this very file under another case ("foo" -> "FOO"): use
    // the client's spelling of the leaf and overwrite nothing.
    std::string_view asked_parent, asked_leaf;
    vfs::split_parent(target.path, asked_parent, asked_leaf);
    p.dst_leaf = std::string(asked_leaf);
    p.same_name = p.dst_leaf == p.src_leaf && p.from_parent == p.to_parent;
    if (p.same_name) return NtStatus::Success;
    existing = vfs::stat_at(p.dst_dir.get(), p.dst_leaf.c_str());
    if (existing && existing->file_id == src_st->file_id) existing = Unexpected(NtStatus::ObjectNameNotFound);
  }
  if (!existing) return existing.error() == NtStatus::ObjectNameNotFound ? NtStatus::Success : existing.error();
  if (!replace) return NtStatus::ObjectNameCollision;
  if (existing->is_directory) return NtStatus::AccessDenied;
  if (file_in_use(req.server, existing->device, existing->file_id)) return NtStatus::AccessDenied;
  p.flags = 0;
  p.replaces = true;
  return NtStatus::Success;
}

// Renames, tells the name index, breaks both directories' leases and
// points the connection's opens at the new name.
NtStatus rename_now(Request& req, state::Open& open, RenamePlace& p) {
  // Both directories change (or the one, twice): the name index counts
  // both sides as in flight until it is told the outcome.
  auto src_change = req.server.names.begin_change(p.src_dir.get());
  auto dst_change = req.server.names.begin_change(p.dst_dir.get());
  // A replaced target's streams kept in sidecars go with its last link.
  state::UniqueFd replaced(p.replaces && vfs::stream_sidecars_in_use()
                               ? openat(p.dst_dir.get(), p.dst_leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)
                               : -1);
  NtStatus s = rename_entry(p.src_dir.get(), p.src_leaf, p.dst_dir.get(), p.dst_leaf, p.flags);
  if (s != NtStatus::Success) {
    src_change.unchanged();
    dst_change.unchanged();
    return s;
  }
  if (struct stat gone; replaced && fstat(replaced.get(), &gone) == 0 && gone.st_nlink == 0)
    vfs::forget_deleted_streams(replaced.get());
  src_change.removed(p.src_leaf);
  dst_change.added(p.dst_leaf);
  break_directory_leases(req.server, p.src_dir.get(), p.src_leaf, req.conn.client_guid, parent_lease_key(open));
  break_directory_leases(req.server, p.dst_dir.get(), p.dst_leaf, req.conn.client_guid, parent_lease_key(open));
  std::string new_path = p.to_parent.empty() ? p.dst_leaf : std::string(p.to_parent) + "/" + p.dst_leaf;
  update_open_paths(req, open, p.from, new_path);
  open.path = new_path;
  return NtStatus::Success;
}

}  // namespace

NtStatus set_rename(Request& req, state::Open& open, ByteSpan buf, bool ex) {
  RenameRequest rr;
  NtStatus s = read_rename(req, buf, ex, rr);
  if (s != NtStatus::Success) return s;
  if ((s = check_renamable(req, open)) != NtStatus::Success) return s;
  RenamePlace p;
  if ((s = locate_rename(req, open, rr.target, p)) != NtStatus::Success) return s;
  if ((s = check_rename_sharing(req, open, p)) != NtStatus::Success) return s;
  if ((s = check_rename_target(req, open, rr.target, rr.replace, p)) != NtStatus::Success || p.same_name) return s;
  return rename_now(req, open, p);
}

// MS-FSA 2.1.5.14.11 with 2.1.4.12: a rename breaks the other opens'
// handle caching and waits until those breaks are over (their holders may
// have to close cached handles first; smb2.lease.rename_wait); a
// directory's rename does the same for the handles below it. It waits on
// the async engine like a CREATE behind a break: answered PENDING, run
// again from here when the acknowledgment, the holder's CLOSE or the break
// timeout comes, and then finds nothing left to wait for. Past the
// engine's limits it does not wait.
NtStatus break_handles_before_rename(Request& req, state::Open& open) {
  state::Waiter waiter{req.conn.address, req.async_id ? req.async_id : next_async_id(req.conn)};
  bool can_wait = req.async_id || has_room_to_wait(req);
  std::shared_ptr<state::FileNode> waits_on;
  if (open.is_directory && !fruit::posix_rename(req))  // POSIX's rename leaves the opens below be
    if (NtStatus s = break_handles_below(req, open, can_wait ? &waiter : nullptr, waits_on); s != NtStatus::Success)
      return s;  // nothing registered: a refusal comes before any break
  if (open.node && open.node->lease_count.load(std::memory_order_relaxed)) {
    bool wait = false;
    post_breaks(req.server,
                req.server.files.break_handles_for_rename(open.node, &open, monotonic_ms(),
                                                          req.server.lease_break_timeout_ms,
                                                          can_wait && !waits_on ? &waiter : nullptr,
                                                          req.async_id != 0, wait),
                req.conn);
    if (wait) waits_on = open.node;
  }
  if (!waits_on) return NtStatus::Success;
  WaitingRequest w;
  w.kind = WaitKind::RunAgain;
  w.node = waits_on;
  w.volatile_id = open.volatile_id;
  w.withdraw = withdraw_rename;
  NtStatus st = start_waiting(req, std::move(w));
  if (st != NtStatus::Pending) req.server.files.drop_waiter(waits_on, waiter);
  return st;
}

}  // namespace ringsmb::smb2
