// Directory leases (MS-SMB2 3.3.1.4, 3.3.5.9.11): an SMB 3.x client may
// hold an RH lease on a directory (RqLs v2) to cache its listing. When an
// entry of the directory changes through this server (created, deleted,
// renamed, its data or attributes changed), the directory's leases lose R,
// which leaves RH nothing; the client that made the change through an open
// whose ParentLeaseKey names the lease keeps it. The break needs an
// acknowledgment (H) but nothing waits for it.
//
// Local changes (a process on the server's disk): the connection that
// holds an open with a directory lease watches that directory through its
// worker's inotify source (DirLeaseWatches) for entries that appear,
// disappear or are renamed (IN_CREATE, IN_DELETE, IN_MOVED_FROM,
// IN_MOVED_TO), and breaks the directory's leases for them. The server's
// own changes of entries in a leased directory, which break the leases
// directly above, are recorded (OwnChanges::entries(), by directory and
// name) and their events dropped: a change through an open naming the
// lease as its parent breaks nothing, and no change breaks twice. An
// event is judged once it has settled (at a worker tick, at least
// kSettleMs after it was read), so the record made right after the
// server's system call (on whichever worker made it) is there first even
// when that thread was held up; a local change breaks the leases within
// 0.5-1.5 s. Not seen: a local process rewriting or
// touching an existing entry (its data, times or attributes), which
// inotify reports as IN_MODIFY / IN_CLOSE_WRITE / IN_ATTRIB and which the
// server's own writes and closes cause too.
//
// Cost: every function returns after one relaxed atomic load while no
// directory is leased anywhere (FileTable::directory_leases_held()), so the
// small-file path pays no syscall for it; a watch exists only while a
// directory lease is held on the connection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "smb2/engine/server_context.hpp"
#include "state/session.hpp"
#include "vfs/change_source.hpp"

namespace ringsmb::smb2 {

struct ConnState;

// The entries of the directory open as DIRFD (any kind of descriptor)
// changed: ENTRY (its name there; empty: unknown) was created, removed,
// renamed or changed. CLIENT made the change, through an open whose
// ParentLeaseKey is PARENT_KEY (null: none).
void break_directory_leases(ServerContext& server, int dirfd, std::string_view entry, const state::Guid& client,
                            const state::Guid* parent_key);

// The same for the directory holding PATH (relative to the share root ROOT_FD).
void break_parent_directory_leases(ServerContext& server, int root_fd, const std::string& path,
                                   const state::Guid& client, const state::Guid* parent_key);

// The ParentLeaseKey an open's changes carry (its v2 lease's), or null.
const state::Guid* parent_lease_key(const state::Open& open);

// The inotify watches of one connection's leased directories (ConnState::dir_lease_watches).
class DirLeaseWatches final : public vfs::ChangeSubscriber {
 public:
  static constexpr int64_t kSettleMs = 500;
  static constexpr size_t kMaxPending = 1024;  // beyond: every watched directory's leases break

  DirLeaseWatches(ConnState& conn, ServerContext& server) : conn_(conn), server_(server) {}
  ~DirLeaseWatches() override;
  DirLeaseWatches(const DirLeaseWatches&) = delete;
  DirLeaseWatches& operator=(const DirLeaseWatches&) = delete;

  // Open VOLATILE_ID of directory DIR_FD, (DEV, INO), holds a directory
  // lease: its directory is watched (once for all such opens).
  void add(uint64_t volatile_id, int dir_fd, uint64_t dev, uint64_t ino);
  // The open closed: the watch ends with the directory's last such open.
  void remove(uint64_t volatile_id);
  // Breaks the leases of the directories that changed locally, for the
  // events read at least kSettleMs before NOW_MS.
  void settle(int64_t now_ms);
  bool settling() const { return !pending_.empty() || lost_; }
  size_t directories() const { return dirs_.size(); }

  void on_change(uint64_t tag, const vfs::DirChange& change) override;
  void on_lost_changes() override { lost_ = true; }
  void on_batch_end() override {}

 private:
  struct Dir {
    vfs::WatchHandle handle = 0;
    uint64_t dev = 0, ino = 0;
    uint32_t opens = 0;
  };
  struct Seen {
    uint64_t tag = 0;
    std::string name;
    int64_t at_ms = 0;
  };
  ConnState& conn_;
  ServerContext& server_;
  std::unordered_map<uint64_t, Dir> dirs_;              // by tag
  std::unordered_map<uint64_t, uint64_t> tag_of_open_;  // volatile FileId -> tag
  std::vector<Seen> pending_;                           // events not judged yet, oldest first
  bool lost_ = false;                                   // the kernel's queue overflowed, or pending_ was full
  uint64_t next_tag_ = 1;
};

// CREATE granted OPEN (a directory, (DEV, INO)) a directory lease: watch
// it for local changes when the connection has a change source.
void watch_leased_directory(ConnState& conn, ServerContext& server, const state::Open& open, uint64_t dev,
                            uint64_t ino);
// CLOSE of open VOLATILE_ID (one pointer test when nothing is watched).
void unwatch_leased_directory(ConnState& conn, uint64_t volatile_id);
// The worker's tick: local changes that settled break their directories' leases.
void settle_directory_changes(ConnState& conn, int64_t now_ms);
// Whether CONN's leased directories have changes still to settle (then
// settle_directory_changes has work on the next tick).
bool directory_changes_settling(const ConnState& conn);

}  // namespace ringsmb::smb2
