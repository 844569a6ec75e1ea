// SMB2 CLOSE (MS-SMB2 2.2.15, 2.2.16, 3.3.5.10) and the release of an open:
// share modes, delete-on-close / delete-pending.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "common/log.hpp"
#include "smb2/access.hpp"
#include "smb2/async_engine.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/notify_watch.hpp"
#include "smb2/thread_identity.hpp"
#include "smb2/lease.hpp"
#include "smb2/lock.hpp"
#include "smb2/pipe_io.hpp"
#include "smb2/share_options.hpp"
#include "state/lock_table.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint16_t { SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB = 0x1 };
constexpr uint32_t FILE_DELETE_ON_CLOSE = 0x1000;

// Unlinks the file of the last open with delete pending.
void delete_file(ServerContext& server, int root_fd, const state::Open& open) {
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
  if (!vfs::unlink_noted(server.names, dir, std::string(leaf), open.is_directory))
    LOG_WARN("delete on close of %s failed, the file stays: %m", open.path.c_str());
  close(dir);
}

}  // namespace

void close_open(ConnState& conn, ServerContext& server, uint64_t volatile_id) {
  withdraw_open(conn, server, volatile_id);  // requests waiting on the handle end with it
  if (conn.notify) drop_notify_watch(conn, volatile_id);
  if (close_pipe(conn, server, volatile_id)) return;
  auto it = conn.opens.find(volatile_id);
  if (it == conn.opens.end()) return;
  std::unique_ptr<state::Open> open = std::move(it->second);
  conn.opens.erase(it);
  state::Session* s = conn.find_session(open->session_id);
  // CREATE granted delete-on-close only with DELETE (grant_create_access);
  // checked again so that no other path to an open can delete without it.
  if ((open->create_options & FILE_DELETE_ON_CLOSE) && (open->granted_access & DELETE)) {
    server.files.set_delete_pending(open->node, true);
    if (open->is_directory) notify_delete_pending(server, open->node);
  }
  bool pending = server.files.is_delete_pending(open->node);
  state::Tree* tree = nullptr;
  if (s) {
    auto t = s->trees.find(open->tree_id);
    if (t != s->trees.end()) tree = t->second.get();
  }
  open->fd.reset();
  std::vector<state::LockWaiter> granted;
  server.locks.release(open.get(), open->node->device, open->node->inode, granted);
  post_lock_grants(server, granted);
  auto closed = server.files.close_cached(open->node, open.get());
  post_wakeups(server, closed.wake);  // a CREATE may wait for this handle or its lease
  if (closed.last && pending && tree && tree->root) {
    become_user(tree->identity);
    delete_file(server, tree->root.get(), *open);
  }
}

void close_open(Request& req, state::Open* open) { close_open(req.conn, req.server, open->volatile_id); }

NtStatus handle_close(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t flags = r.u16();
  r.skip(4);
  r.skip(16);  // FileId: Request::open_file()
  state::Open* open = req.open_file();
  if (!open) return NtStatus::FileClosed;
  vfs::FileStat st{};
  bool have_stat = false;
  uint32_t attrs = 0;
  if (flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB) {
    auto s = vfs::stat_fd(open->fd.get());
    if (s) {
      st = *s;
      have_stat = true;
      std::string_view parent, leaf;
      vfs::split_parent(open->path, parent, leaf);
      attrs = reported_attributes(req.tree->share, st, leaf, open->fd.get());
    }
  }
  close_open(req, open);
  w.u16(60);
  w.u16(have_stat ? SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB : 0);
  w.u32(0);
  if (have_stat) {
    w.u64(st.creation_time);
    w.u64(st.last_access_time);
    w.u64(st.last_write_time);
    w.u64(st.change_time);
    w.u64(st.allocation_size);
    w.u64(st.end_of_file);
    w.u32(attrs);
  } else {
    w.zeros(52);
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
