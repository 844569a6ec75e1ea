#include "smb2/notify/notify_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/clock.hpp"
#include "smb2/notify/own_changes.hpp"
#include "smb2/engine/server_context.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

// Changes held for an open between two requests: at most its request's
// OutputBufferLength, and never more than this (beyond: NOTIFY_ENUM_DIR).
constexpr uint32_t kMaxBufferedBytes = 64 * 1024;
constexpr int64_t kLimitLogIntervalMs = 10'000;
// A tree watch follows its directories whatever the client's filter.
constexpr uint32_t kTreeMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

// Limits reached are logged, but a client retrying must not flood the log.
bool may_log_limit() {
  static std::atomic<int64_t> last{-kLimitLogIntervalMs};
  int64_t now = monotonic_ms(), prev = last.load(std::memory_order_relaxed);
  return now - prev >= kLimitLogIntervalMs && last.compare_exchange_strong(prev, now);
}

bool under(const std::string& path, const std::string& top) {
  return path.size() > top.size() && path.compare(0, top.size(), top) == 0 && path[top.size()] == '/';
}

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

// The subdirectories of open directory FD (names only; symlinks are not followed).
std::vector<std::string> subdirectories(int fd) {
  std::vector<std::string> out;
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return out;
  DIR* d = fdopendir(dup_fd);
  if (!d) {
    close(dup_fd);
    return out;
  }
  while (dirent* e = readdir(d)) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) out.emplace_back(e->d_name);
  }
  closedir(d);
  return out;
}

}  // namespace

NotifyWatch::NotifyWatch(ConnState& conn, ServerContext& server, uint64_t volatile_id, uint32_t filter, bool tree,
                         const ipc::UnixUser& identity)
    : conn_(conn), server_(server), table_(*conn.notify), volatile_id_(volatile_id), filter_(filter), tree_(tree),
      mask_(inotify_mask_for(filter) | (tree ? kTreeMask : 0)), identity_(identity) {
  buffer_.set_memory(&table_.memory);
}

NotifyWatch::~NotifyWatch() {
  if (node_) server_.files.remove_notify_watcher(node_, {conn_.address, volatile_id_});
  for (auto& [tag, dir] : dirs_) {
    if (conn_.changes) conn_.changes->unwatch(dir.handle);
    --table_.dir_watches;
  }
}

NtStatus NotifyWatch::start(int dir_fd, const std::string& what, uint32_t output_length) {
  root_fd_ = dir_fd;
  what_ = what;
  buffer_.set_cap(std::min(output_length, kMaxBufferedBytes));
  return watch_tree("");
}

NotifyWatch::Watched NotifyWatch::watch_one(int fd, const std::string& path) {
  if (table_.dir_watches >= server_.max_notify_watches) return Watched::OverLimit;
  uint64_t tag = next_tag_++;
  auto h = conn_.changes->watch(fd, mask_, this, tag);
  if (!h) {
    int err = h.error();
    if (err == EEXIST) return Watched::Already;
    if ((err == ENOSPC || err == EMFILE) && may_log_limit())
      LOG_WARN("%s: CHANGE_NOTIFY on %s: the kernel's inotify limit is reached (%s: raise "
               "fs.inotify.max_user_%s, docs/configuration.md)",
               conn_.client_address.c_str(), what_.c_str(), strerror(err), err == ENOSPC ? "watches" : "instances");
    last_errno_ = err;
    return (err == ENOSPC || err == EMFILE) ? Watched::KernelLimit : Watched::Failed;
  }
  Dir dir{*h, path};
  if (auto st = vfs::stat_fd(fd)) {
    dir.dev = st->device;
    dir.ino = st->file_id;
  }
  dirs_[tag] = std::move(dir);
  ++table_.dir_watches;
  return Watched::Yes;
}

// Breadth first from TOP (relative to the open's directory): the
// directories nearest the top are watched first. Each is opened beneath
// the open's directory, as every client path is.
NtStatus NotifyWatch::watch_tree(const std::string& top) {
  std::deque<std::string> todo{top};
  while (!todo.empty()) {
    std::string path = std::move(todo.front());
    todo.pop_front();
    int fd = vfs::open_beneath(root_fd_, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
    if (fd < 0) {
      if (path.empty()) return vfs::open_beneath_status(fd);
      continue;  // gone or renamed meanwhile: its own change tells
    }
    Watched r = watch_one(fd, path);
    if (r == Watched::Yes && tree_)
      for (std::string& name : subdirectories(fd)) todo.push_back(join(path, name));
    close(fd);
    if (r == Watched::OverLimit) {
      if (!over_limit_logged_ && may_log_limit())
        LOG_WARN("%s: CHANGE_NOTIFY with WATCH_TREE on %s: more than %u directories to watch (max notify "
                 "watches per connection); %s",
                 conn_.client_address.c_str(), what_.c_str(), server_.max_notify_watches,
                 top.empty() ? "refused" : "changes beneath are reported as NOTIFY_ENUM_DIR");
      over_limit_logged_ = true;
      return NtStatus::InsufficientResources;
    }
    if (r == Watched::KernelLimit) return NtStatus::InsufficientResources;
    // The watched directory itself could not be watched (EACCES, or no
    // inotify: ENOSYS): the request fails; a subdirectory is skipped.
    if (r == Watched::Failed && path == top) return nt_status_from_errno(last_errno_);
  }
  return NtStatus::Success;
}

std::string NotifyWatch::child_path(uint64_t tag, std::string_view name) const {
  auto d = dirs_.find(tag);
  return d == dirs_.end() ? std::string() : join(d->second.path, name);
}

void NotifyWatch::report(uint32_t mask, bool paired, const std::string& path) {
  auto a = notify_action(mask, paired);
  if (a && (a->filter & filter_)) buffer_.add(a->action, path);
  if (rename_reported_as_modified(mask, filter_)) buffer_.add(FILE_ACTION_MODIFIED, path);
}

// A subdirectory appeared in a tree (created, or moved in): it and what
// it holds are watched, as the tree's user. Past a limit the client is
// told to re-read (NOTIFY_ENUM_DIR).
void NotifyWatch::watch_new_subtree(const std::string& path) {
  become_user(identity_);
  if (watch_tree(path) != NtStatus::Success) buffer_.overflow();
}

void NotifyWatch::unwatch_under(const std::string& path) {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->second.path == path || under(it->second.path, path)) {
      conn_.changes->unwatch(it->second.handle);
      --table_.dir_watches;
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
}

// A rename inside one directory of the tree: the watches beneath follow.
void NotifyWatch::moved_dir(const std::string& from, const std::string& to) {
  for (auto& [tag, dir] : dirs_) {
    if (dir.path == from) dir.path = to;
    else if (under(dir.path, from)) dir.path = to + dir.path.substr(from.size());
  }
}

// An IN_MOVED_FROM with no IN_MOVED_TO in the same directory: the entry
// left (for the client: REMOVED).
void NotifyWatch::end_move_from() {
  MovedFrom m = std::move(*moved_from_);
  moved_from_.reset();
  report(m.mask, false, m.path);
  if (tree_ && (m.mask & IN_ISDIR)) unwatch_under(m.path);
}

void NotifyWatch::mark_first_change(size_t held_before) {
  if (held_before == 0 && first_change_end_ == 0 && !waiting_.empty() && buffer_.count() > 0)
    first_change_end_ = buffer_.count();
}

// An IN_ATTRIB alone, on a name the server changed itself just now: that
// change is reported by report_own with its exact filter instead.
bool NotifyWatch::caused_by_server(uint64_t tag, const vfs::DirChange& change) const {
  if ((change.mask & ~uint32_t(IN_ISDIR)) != IN_ATTRIB || OwnChanges::process().empty()) return false;
  auto d = dirs_.find(tag);
  return d != dirs_.end() && OwnChanges::process().recent(d->second.dev, d->second.ino, change.name, monotonic_ms());
}

void NotifyWatch::report_own(const std::string& relative, uint32_t filter) {
  if (!(filter & filter_)) return;
  if (!tree_ && relative.find('/') != std::string::npos) return;  // beneath a subdirectory: tree watches only
  size_t held_before = buffer_.count();
  buffer_.add(FILE_ACTION_MODIFIED, relative);
  mark_first_change(held_before);
  deliver();  // on the connection's thread (a posted task), which sends what is ready
}

void NotifyWatch::on_change(uint64_t tag, const vfs::DirChange& change) {
  // Overflowed: its next report is NOTIFY_ENUM_DIR whatever comes now. A
  // tree watch still follows its directories, and a dropped watch is let go.
  if (buffer_.overflowed() && !tree_ && !(change.mask & IN_IGNORED)) return;
  if (caused_by_server(tag, change)) return;
  size_t held_before = buffer_.count();
  handle_change(tag, change);
  mark_first_change(held_before);
}

void NotifyWatch::handle_change(uint64_t tag, const vfs::DirChange& change) {
  if (change.mask & IN_IGNORED) {  // the kernel dropped the watch: the directory is gone
    if (dirs_.erase(tag)) --table_.dir_watches;
    return;
  }
  if (change.name.empty() || !dirs_.count(tag)) return;  // the directory's own events
  std::string path = child_path(tag, change.name);
  bool is_dir = change.mask & IN_ISDIR;
  bool completes_move = (change.mask & IN_MOVED_TO) && moved_from_ && moved_from_->cookie == change.cookie &&
                        moved_from_->tag == tag;
  if (moved_from_ && !completes_move) end_move_from();
  if (change.mask & IN_MOVED_FROM) {
    moved_from_ = MovedFrom{change.cookie, change.mask, tag, std::move(path)};
    return;
  }
  if (completes_move) {
    report(moved_from_->mask, true, moved_from_->path);
    report(change.mask, true, path);
    if (tree_ && is_dir) moved_dir(moved_from_->path, path);
    moved_from_.reset();
    return;
  }
  report(change.mask, false, path);
  if (tree_ && is_dir && (change.mask & (IN_CREATE | IN_MOVED_TO))) watch_new_subtree(path);
  if (tree_ && is_dir && (change.mask & IN_DELETE)) unwatch_under(path);
}

void NotifyWatch::on_batch_end() {
  if (moved_from_) {
    size_t held_before = buffer_.count();
    end_move_from();
    mark_first_change(held_before);
  }
  if (!buffer_.has_news() || waiting_.empty() || delivery_posted_) return;
  // At once, with what this batch brought: a client's CREATE, WRITE,
  // SET_INFO of one file then complete one request with the ADDED and
  // leave the MODIFIED for the next, as Windows does (smb2.notify.valid-req
  // counts them). Through the connection's task queue, which sends what
  // became ready and flushes the connection (post_to_conn).
  delivery_posted_ = true;
  uint64_t vid = volatile_id_;
  post_to_conn(server_, conn_.address, [vid](ConnState& conn, Bytes&) {
    if (!conn.notify) return;
    auto it = conn.notify->by_open.find(vid);
    if (it != conn.notify->by_open.end()) it->second->deliver();
  });
}

void NotifyWatch::enqueue(uint64_t async_id, uint32_t output_length) { waiting_.emplace_back(async_id, output_length); }

bool NotifyWatch::dequeue(uint64_t async_id) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (it->first == async_id) {
      waiting_.erase(it);
      return true;
    }
  return false;
}

NtStatus NotifyWatch::take(uint32_t output_length, Bytes& body, size_t count) {
  Bytes list;
  NtStatus st = buffer_.take_first(count, output_length, list);
  if (st != NtStatus::Success) return st;
  ByteWriter w(body);
  w.u16(9);                               // StructureSize
  w.u16(uint16_t(wire::kHeaderSize + 8));  // OutputBufferOffset
  w.u32(uint32_t(list.size()));
  w.bytes(list);
  return st;
}

void NotifyWatch::deliver() {
  delivery_posted_ = false;
  while (!waiting_.empty() && buffer_.has_news()) {
    auto [id, length] = waiting_.front();
    waiting_.pop_front();
    size_t count = first_change_end_ ? first_change_end_ : buffer_.count();
    first_change_end_ = 0;
    Bytes body;
    NtStatus st = take(length, body, count);
    complete(conn_, id, st, body);
  }
}

void NotifyWatch::attach(std::shared_ptr<state::FileNode> node) {
  if (!node) return;
  node_ = std::move(node);
  server_.files.add_notify_watcher(node_, {conn_.address, volatile_id_});
}

void NotifyWatch::fail_waiting(NtStatus status) {
  while (!waiting_.empty()) {
    uint64_t id = waiting_.front().first;
    waiting_.pop_front();
    complete(conn_, id, status);
  }
}

void notify_delete_pending(ServerContext& server, const std::shared_ptr<state::FileNode>& node) {
  for (const state::FileNode::NotifyWatcher& w : server.files.notify_watchers(node)) {
    uint64_t vid = w.volatile_id;
    post_to_conn(server, w.conn, [vid](ConnState& conn, Bytes&) {
      if (!conn.notify) return;
      auto it = conn.notify->by_open.find(vid);
      if (it != conn.notify->by_open.end()) it->second->fail_waiting(NtStatus::DeletePending);
    });
  }
}

void drop_notify_watch(ConnState& conn, uint64_t volatile_id) {
  if (conn.notify) conn.notify->by_open.erase(volatile_id);
}

}  // namespace ringsmb::smb2
