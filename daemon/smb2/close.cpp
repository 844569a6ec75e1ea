// SMB2 CLOSE (MS-SMB2 2.2.15, 2.2.16, 3.3.5.10) and the release of an open:
// share modes, delete-on-close / delete-pending.
#include <fcntl.h>
#include <unistd.h>

#include "common/log.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/thread_identity.hpp"
#include "smb2/lease.hpp"
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
  if (dir < 0) return;
  if (!vfs::unlink_noted(server.names, dir, std::string(leaf), open.is_directory))
    LOG_DEBUG("delete on close of %s: %m", open.path.c_str());
  close(dir);
}

}  // namespace

void close_open(ConnState& conn, ServerContext& server, uint64_t volatile_id) {
  if (close_pipe(conn, server, volatile_id)) return;
  auto it = conn.opens.find(volatile_id);
  if (it == conn.opens.end()) return;
  std::unique_ptr<state::Open> open = std::move(it->second);
  conn.opens.erase(it);
  state::Session* s = conn.find_session(open->session_id);
  if (open->create_options & FILE_DELETE_ON_CLOSE) server.files.set_delete_pending(open->node, true);
  bool pending = server.files.is_delete_pending(open->node);
  state::Tree* tree = nullptr;
  if (s) {
    auto t = s->trees.find(open->tree_id);
    if (t != s->trees.end()) tree = t->second.get();
  }
  open->fd.reset();
  server.locks.release(open.get(), open->node->device, open->node->inode);
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
  FileId id{r.u64(), r.u64()};
  state::Open* open = req.find_open(id);
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
