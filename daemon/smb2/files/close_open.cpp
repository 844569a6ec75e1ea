#include "smb2/files/close_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "common/log.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/locks/lock_grants.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/files/recycle.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/streams/stream_io.hpp"
#include "state/lock_table.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::create::FILE_DELETE_ON_CLOSE;

// Unlinks the file of the last open with delete pending.
void delete_file(ServerContext& server, int root_fd, const state::Open& open, const state::Guid& client,
                 const config::RecycleConfig* recycle) {
  const bool is_directory = open.stream ? open.stream->base_is_directory : open.is_directory;
  std::string_view parent, leaf;
  vfs::split_parent(open.path, parent, leaf);
  if (leaf.empty()) return;  // never the share root
  int dir = vfs::open_beneath(root_fd, parent.empty() ? "." : std::string(parent).c_str(),
                              O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  // CREATE and SET_INFO checked that the user may delete the file
  // (access_check.hpp); what still fails here (the directory changed since,
  // a file system error) cannot be reported to any client: say so in the log.
  if (dir < 0) {
    LOG_WARN("delete on close of %s: directory gone: %s", open.path.c_str(), strerror(-dir));
    return;
  }
  // Streams kept in sidecars go with the last link (vfs/stream_sidecar.hpp).
  state::UniqueFd doomed(vfs::stream_sidecars_in_use()
                             ? openat(dir, std::string(leaf).c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)
                             : -1);
  if (recycle && recycle->enabled && !is_directory && !open.stream &&
      move_to_recycle_bin(server.names, root_fd, dir, open.path, leaf, *recycle) == RecycleOutcome::Moved) {
    break_directory_leases(server, dir, leaf, client, parent_lease_key(open));
  } else if (!vfs::unlink_noted(server.names, dir, std::string(leaf), is_directory)) {
    LOG_WARN("delete on close of %s failed, the file stays: %m", open.path.c_str());
  } else {
    break_directory_leases(server, dir, leaf, client, parent_lease_key(open));
    struct stat st;
    if (doomed && fstat(doomed.get(), &st) == 0 && st.st_nlink == 0) vfs::forget_deleted_streams(doomed.get());
  }
  close(dir);
}

// Should OPEN's descriptor be closed on the blocking pool? A large file's
// last close may free its blocks (once it is unlinked, by the delete below
// or by anyone else), which takes milliseconds. PENDING: the file is to be
// deleted, then its size is asked of the kernel (a delete pays that fstat;
// an ordinary close of a small file makes no system call here).
bool closes_off_worker(const ServerContext& server, const state::Open& open, bool pending) {
  if (!server.blocking || open.is_directory || open.stream || open.fd.get() < 0) return false;
  if (open.large) return true;
  if (!pending) return false;
  struct stat st;
  return fstat(open.fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
         uint64_t(st.st_blocks) * 512 >= state::kLargeFileBytes;
}

// Closes FD on the blocking pool. Its number stays taken until then (no
// other open can get it meanwhile), and CHARGE keeps it counted against
// the descriptor budget until it is closed.
void close_on_pool(ServerContext& server, state::UniqueFd fd, state::OpenCharge charge) {
  auto held = std::make_shared<state::OpenCharge>(std::move(charge));
  server.blocking->submit([fd = fd.release(), held]() mutable {
    close(fd);
    held.reset();
  });
}

}  // namespace

void release_open(ServerContext& server, std::unique_ptr<state::Open> open, int root_fd,
                  const ipc::UnixUser& identity, const state::Guid& client, const config::RecycleConfig* recycle) {
  // CREATE granted delete-on-close only with DELETE (grant_create_access);
  // checked again so that no other path to an open can delete without it.
  if ((open->create_options & FILE_DELETE_ON_CLOSE) && (open->granted_access & DELETE)) {
    server.files.set_delete_pending(open->node, true);
    if (open->is_directory) notify_delete_pending(server, open->node);
  }
  bool pending = server.files.is_delete_pending(open->node);
  // Out of the DurableTable's indexes now; the CREATEs that wait for this
  // close (a reconnect, the application instance's next open) run again
  // only once the file table has let go of the open, at the end: woken
  // earlier, one on another worker could still meet the open and break
  // its oplock (smb2.durable-v2-open.app-instance).
  std::vector<state::Waiter> durable_waiters;
  if (open->outlives_connection() || open->create_guid_indexed || open->app_instance_indexed)
    durable_waiters = server.durables.forget(*open);
  // A stream open keeps the file's fd until the stream is settled; a large
  // file's goes to the pool, after the delete (or it would free the
  // blocks in the unlink, here).
  state::UniqueFd stream_fd = open->stream ? std::move(open->fd) : state::UniqueFd();
  state::UniqueFd pool_fd = closes_off_worker(server, *open, pending) ? std::move(open->fd) : state::UniqueFd();
  open->fd.reset();
  std::vector<state::LockWaiter> granted;
  server.locks.release(open.get(), open->node->device, open->node->inode, granted);
  post_lock_grants(server, granted);
  auto closed = server.files.close_cached(open->node, open.get());
  post_wakeups(server, closed.wake);  // a CREATE may wait for this handle or its lease
  bool delete_last = closed.last && pending;
  if (open->stream) delete_last = close_stream(server, *open, stream_fd.get(), delete_last);
  stream_fd.reset();
  if (delete_last && root_fd >= 0) {
    become_user(identity);
    delete_file(server, root_fd, *open, client, recycle);
  } else if (open->entry_changed && root_fd >= 0) {
    break_parent_directory_leases(server, root_fd, open->path, client, parent_lease_key(*open));
  }
  if (pool_fd) close_on_pool(server, std::move(pool_fd), std::move(open->charge));
  post_wakeups(server, durable_waiters);
}

void close_open(ConnState& conn, ServerContext& server, uint64_t volatile_id) {
  withdraw_open(conn, server, volatile_id);  // requests waiting on the handle end with it
  if (conn.notify) drop_notify_watch(conn, volatile_id);
  unwatch_leased_directory(conn, volatile_id);
  if (close_pipe(conn, server, volatile_id)) return;
  auto it = conn.tables->opens.find(volatile_id);
  if (it == conn.tables->opens.end()) return;
  std::unique_ptr<state::Open> open = std::move(it->second);
  conn.tables->opens.erase(it);
  if (open->quota_file) return;  // nothing behind it to release (smb2/quota/)
  state::Session* s = conn.find_session(open->session_id);
  state::Tree* tree = nullptr;
  if (s) {
    auto t = s->trees.find(open->tree_id);
    if (t != s->trees.end()) tree = t->second.get();
  }
  static const ipc::UnixUser kNobody{};
  release_open(server, std::move(open), tree && tree->root ? tree->root.get() : -1, tree ? tree->identity : kNobody,
               conn.client_guid, tree ? &tree->share.recycle : nullptr);
}

}  // namespace ringsmb::smb2
