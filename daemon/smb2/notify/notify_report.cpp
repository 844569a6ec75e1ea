#include "smb2/notify/notify_report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/clock.hpp"
#include "smb2/notify/notify_buffer.hpp"
#include "smb2/notify/own_changes.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

// FILE_BASIC_INFORMATION's settable attributes (MS-FSA 2.1.5.14.2
// ValidSetAttributes): READONLY, HIDDEN, SYSTEM, ARCHIVE, TEMPORARY,
// OFFLINE, NOT_CONTENT_INDEXED.
constexpr uint32_t kValidSetAttributes = 0x1 | 0x2 | 0x4 | 0x20 | 0x100 | 0x1000 | 0x2000;

bool time_given(uint64_t t) { return int64_t(t) > 0; }

// (dev, ino) of directory DIR beneath ROOT_FD ("" the root itself).
bool dir_identity(int root_fd, std::string_view dir, uint64_t& dev, uint64_t& ino) {
  int fd = vfs::open_beneath(root_fd, dir.empty() ? "." : std::string(dir).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  auto st = vfs::stat_fd(fd);
  close(fd);
  if (!st) return false;
  dev = st->device;
  ino = st->file_id;
  return true;
}

void tell_watchers(ServerContext& server, uint64_t dev, uint64_t ino, const std::string& relative, uint32_t filter) {
  for (const state::FileNode::NotifyWatcher& w : server.files.notify_watchers(dev, ino)) {
    uint64_t vid = w.volatile_id;
    post_to_conn(server, w.conn, [vid, relative, filter](ConnState& conn, Bytes&) {
      if (!conn.notify) return;
      auto it = conn.notify->by_open.find(vid);
      if (it != conn.notify->by_open.end()) it->second->report_own(relative, filter);
    });
  }
}

}  // namespace

uint32_t basic_info_filter(uint32_t original_attrs, uint64_t creation, uint64_t access, uint64_t write,
                           uint32_t attrs) {
  uint32_t filter = 0;
  if (time_given(creation)) filter |= FILE_NOTIFY_CHANGE_CREATION;
  if (time_given(access)) filter |= FILE_NOTIFY_CHANGE_LAST_ACCESS;
  if (time_given(write)) filter |= FILE_NOTIFY_CHANGE_LAST_WRITE;
  // FileAttributes 0 leaves them; otherwise the settable ones are replaced.
  if (attrs != 0 && (attrs & kValidSetAttributes) != (original_attrs & kValidSetAttributes))
    filter |= FILE_NOTIFY_CHANGE_ATTRIBUTES;
  return filter;
}

bool note_own_change(ServerContext& server, int root_fd, const std::string& path) {
  if (!server.files.notify_watched() || path.empty()) return false;
  std::string_view parent, leaf;
  vfs::split_parent(path, parent, leaf);
  uint64_t dev = 0, ino = 0;
  if (!dir_identity(root_fd, parent, dev, ino)) return false;
  OwnChanges::process().add(dev, ino, leaf, monotonic_ms());
  return true;
}

void report_own_change(ServerContext& server, int root_fd, const std::string& path, uint32_t filter) {
  if (!server.files.notify_watched() || path.empty() || filter == 0) return;
  // The parent's watchers see the leaf; each directory above, its WATCH_TREE
  // watchers (NotifyWatch::report_own drops a deeper path for the others).
  std::string_view dir = path;
  while (!dir.empty()) {
    std::string_view parent, leaf;
    vfs::split_parent(dir, parent, leaf);
    uint64_t dev = 0, ino = 0;
    if (dir_identity(root_fd, parent, dev, ino))
      tell_watchers(server, dev, ino, std::string(path.substr(parent.empty() ? 0 : parent.size() + 1)), filter);
    dir = parent;
  }
}

}  // namespace ringsmb::smb2
