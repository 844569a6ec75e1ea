#include "smb2/leases/directory_lease.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/notify/own_changes.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

// Entries appearing, disappearing or renamed: what a cached listing shows.
constexpr uint32_t kEntryEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

}  // namespace

void break_directory_leases(ServerContext& server, int dirfd, std::string_view entry, const state::Guid& client,
                            const state::Guid* parent_key) {
  if (!server.files.directory_leases_held() || dirfd < 0) return;
  auto st = vfs::stat_fd(dirfd);
  if (!st) return;  // the change happened; a directory we cannot stat has no lease we could find
  int64_t now = monotonic_ms();
  bool leased = false;
  post_breaks(server, server.files.break_directory(st->device, st->file_id, client, parent_key, now,
                                                   server.lease_break_timeout_ms, &leased));
  // The inotify event of this change is the server's own: DirLeaseWatches drops it.
  if (leased && !entry.empty()) OwnChanges::entries().add(st->device, st->file_id, entry, now);
}

void break_parent_directory_leases(ServerContext& server, int root_fd, const std::string& path,
                                   const state::Guid& client, const state::Guid* parent_key) {
  if (!server.files.directory_leases_held() || path.empty()) return;  // the share root has no parent here
  std::string_view parent, leaf;
  vfs::split_parent(path, parent, leaf);
  int dir = vfs::open_beneath(root_fd, parent.empty() ? "." : std::string(parent).c_str(),
                              O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0) return;
  break_directory_leases(server, dir, leaf, client, parent_key);
  close(dir);
}

const state::Guid* parent_lease_key(const state::Open& open) {
  if (!open.lease || open.lease->is_oplock || !open.lease->has_parent) return nullptr;
  return &open.lease->parent_key;
}

// ---- local changes ----------------------------------------------------------

DirLeaseWatches::~DirLeaseWatches() {
  if (!conn_.changes) return;
  for (auto& [tag, d] : dirs_) conn_.changes->unwatch(d.handle);
}

void DirLeaseWatches::add(uint64_t volatile_id, int dir_fd, uint64_t dev, uint64_t ino) {
  if (!conn_.changes || tag_of_open_.count(volatile_id)) return;
  for (auto& [tag, d] : dirs_)
    if (d.dev == dev && d.ino == ino) {
      ++d.opens;
      tag_of_open_[volatile_id] = tag;
      return;
    }
  uint64_t tag = next_tag_++;
  auto h = conn_.changes->watch(dir_fd, kEntryEvents, this, tag);
  if (!h) {  // its leases then break for the server's changes only
    LOG_DEBUG("%s: leased directory not watched for local changes: %s", conn_.client_address.c_str(),
              strerror(h.error()));
    return;
  }
  dirs_[tag] = Dir{*h, dev, ino, 1};
  tag_of_open_[volatile_id] = tag;
}

void DirLeaseWatches::remove(uint64_t volatile_id) {
  auto o = tag_of_open_.find(volatile_id);
  if (o == tag_of_open_.end()) return;
  uint64_t tag = o->second;
  tag_of_open_.erase(o);
  auto d = dirs_.find(tag);
  if (d == dirs_.end() || --d->second.opens > 0) return;
  if (conn_.changes) conn_.changes->unwatch(d->second.handle);
  dirs_.erase(d);
  std::erase_if(pending_, [tag](const Seen& s) { return s.tag == tag; });
}

void DirLeaseWatches::on_change(uint64_t tag, const vfs::DirChange& change) {
  if (change.mask & IN_IGNORED) {  // the kernel dropped the watch: the directory is gone
    dirs_.erase(tag);
    std::erase_if(tag_of_open_, [tag](const auto& kv) { return kv.second == tag; });
    return;
  }
  if (change.name.empty() || !(change.mask & kEntryEvents) || !dirs_.count(tag)) return;
  if (pending_.size() >= kMaxPending) {  // a flood: no need to judge each one
    lost_ = true;
    return;
  }
  pending_.push_back({tag, std::string(change.name), monotonic_ms()});
}

void DirLeaseWatches::settle(int64_t now_ms) {
  std::vector<const Dir*> changed;
  auto mark = [&](const Dir& d) {
    if (std::find(changed.begin(), changed.end(), &d) == changed.end()) changed.push_back(&d);
  };
  size_t judged = 0;
  for (; judged < pending_.size() && now_ms - pending_[judged].at_ms >= kSettleMs; ++judged) {
    const Seen& s = pending_[judged];
    auto d = dirs_.find(s.tag);
    if (d == dirs_.end()) continue;
    if (!OwnChanges::entries().recent(d->second.dev, d->second.ino, s.name, now_ms)) mark(d->second);
  }
  pending_.erase(pending_.begin(), pending_.begin() + ptrdiff_t(judged));
  if (std::exchange(lost_, false))
    for (const auto& [tag, d] : dirs_) mark(d);
  static const state::Guid kNobody{};  // a local process: no lease is its own
  for (const Dir* d : changed)
    post_breaks(server_, server_.files.break_directory(d->dev, d->ino, kNobody, nullptr, now_ms,
                                                       server_.lease_break_timeout_ms));
}

void watch_leased_directory(ConnState& conn, ServerContext& server, const state::Open& open, uint64_t dev,
                            uint64_t ino) {
  if (!conn.changes || !open.fd) return;
  if (!conn.dir_lease_watches) conn.dir_lease_watches = std::make_shared<DirLeaseWatches>(conn, server);
  conn.dir_lease_watches->add(open.volatile_id, open.fd.get(), dev, ino);
}

void unwatch_leased_directory(ConnState& conn, uint64_t volatile_id) {
  if (conn.dir_lease_watches) conn.dir_lease_watches->remove(volatile_id);
}

void settle_directory_changes(ConnState& conn, int64_t now_ms) {
  if (directory_changes_settling(conn)) conn.dir_lease_watches->settle(now_ms);
}

bool directory_changes_settling(const ConnState& conn) {
  return conn.dir_lease_watches && conn.dir_lease_watches->settling();
}

}  // namespace ringsmb::smb2
