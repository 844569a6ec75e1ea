// CHANGE_NOTIFY's watches (MS-SMB2 3.3.5.19, MS-FSA 2.1.5.11): one per
// open that asked, set up by its first request (its CompletionFilter and
// SMB2_WATCH_TREE hold for the open's life, as MS-SMB2 3.3.1.3 says), fed
// by the worker's vfs::ChangeSource and holding what changed between two
// requests (NotifyBuffer). Requests wait in the async engine, in arrival
// order; a batch of changes completes the oldest.
//
// A tree watch is a kernel watch per directory beneath the open's
// (inotify watches one directory), each counted against "max notify
// watches" per connection; directories created or moved in later are
// watched as they appear, those moved out or deleted are let go.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "ipc/control_plane.hpp"
#include "state/file_table.hpp"
#include "smb2/notify/notify_buffer.hpp"
#include "vfs/change_source.hpp"

namespace ringsmb::smb2 {

struct ConnState;
struct ServerContext;
class NotifyWatch;

// What the watches of one connection may hold together, in bytes of
// held changes (docs/security.md): 16 full buffers of 64 KiB.
inline constexpr size_t kMaxHeldNotifyBytesPerConnection = 1024 * 1024;

// The CHANGE_NOTIFY state of one connection (ConnState::notify).
struct NotifyTable {
  // Before the watches: their buffers give their bytes back as they go.
  NotifyMemory memory{0, kMaxHeldNotifyBytesPerConnection};
  std::unordered_map<uint64_t, std::unique_ptr<NotifyWatch>> by_open;  // by volatile FileId
  uint32_t dir_watches = 0;  // kernel watches held, against ServerContext::max_notify_watches
};

class NotifyWatch final : public vfs::ChangeSubscriber {
 public:
  NotifyWatch(ConnState& conn, ServerContext& server, uint64_t volatile_id, uint32_t filter, bool tree,
              const ipc::UnixUser& identity);
  ~NotifyWatch() override;
  NotifyWatch(const NotifyWatch&) = delete;
  NotifyWatch& operator=(const NotifyWatch&) = delete;

  // Watches directory DIR_FD (the open's) and, for a tree, every directory
  // beneath; STATUS_INSUFFICIENT_RESOURCES past a limit (logged).
  // WHAT names it in the log. The first request's OUTPUT_LENGTH bounds
  // what is held between requests for the open's life (as on Windows: if
  // the first request's buffer is too small, every report is
  // NOTIFY_ENUM_DIR; smb2.notify.valid-req).
  NtStatus start(int dir_fd, const std::string& what, uint32_t output_length);
  // Registers the watch with the directory's FileNode, so that another
  // open making it delete pending ends the waiting requests
  // (notify_delete_pending).
  void attach(std::shared_ptr<state::FileNode> node);
  // Completes every waiting request with STATUS (DELETE_PENDING).
  void fail_waiting(NtStatus status);

  // A request waits for changes (ASYNC_ID, its OutputBufferLength), or
  // stops waiting (withdrawn).
  void enqueue(uint64_t async_id, uint32_t output_length);
  bool dequeue(uint64_t async_id);
  bool has_news() const { return buffer_.has_news(); }
  bool waiting() const { return !waiting_.empty(); }
  // The response body (MS-SMB2 2.2.36, after the header) for a request of
  // OUTPUT_LENGTH bytes, taking the buffered changes; STATUS_SUCCESS or
  // STATUS_NOTIFY_ENUM_DIR (BODY then empty).
  NtStatus take(uint32_t output_length, Bytes& body, size_t count = SIZE_MAX);
  // Completes waiting requests while there is news.
  void deliver();

  // A metadata change the server made itself (smb2/notify/notify_report.hpp) to
  // RELATIVE (a path beneath the watched directory), under FILTER.
  void report_own(const std::string& relative, uint32_t filter);

  void on_change(uint64_t tag, const vfs::DirChange& change) override;
  void on_lost_changes() override { buffer_.overflow(); }
  void on_batch_end() override;

 private:
  void handle_change(uint64_t tag, const vfs::DirChange& change);
  struct Dir {
    vfs::WatchHandle handle = 0;
    std::string path;  // relative to the watched directory, '/'-separated; "" for itself
    uint64_t dev = 0, ino = 0;  // its identity: the key of the server's own changes (OwnChanges)
  };
  struct MovedFrom {
    uint32_t cookie = 0;
    uint32_t mask = 0;
    uint64_t tag = 0;  // its directory: a rename is reported as one only within a directory (MS-FSCC 2.7.1)
    std::string path;
  };
  enum class Watched { Yes, Already, OverLimit, KernelLimit, Failed };
  NtStatus watch_tree(const std::string& top);
  Watched watch_one(int fd, const std::string& path);
  void watch_new_subtree(const std::string& path);
  void report(uint32_t mask, bool paired, const std::string& path);
  bool caused_by_server(uint64_t tag, const vfs::DirChange& change) const;
  void end_move_from();
  void moved_dir(const std::string& from, const std::string& to);
  void unwatch_under(const std::string& path);
  std::string child_path(uint64_t tag, std::string_view name) const;

  ConnState& conn_;
  ServerContext& server_;
  NotifyTable& table_;  // conn_.notify, which owns this watch
  uint64_t volatile_id_;
  uint32_t filter_;
  bool tree_;
  uint32_t mask_;
  int root_fd_ = -1;           // the open's directory fd, which outlives the watch
  ipc::UnixUser identity_;      // the tree's: walks of new subdirectories run as it
  std::string what_;            // for the log: share and path
  std::unordered_map<uint64_t, Dir> dirs_;  // by tag
  uint64_t next_tag_ = 1;
  std::optional<MovedFrom> moved_from_;
  std::deque<std::pair<uint64_t, uint32_t>> waiting_;  // (AsyncId, OutputBufferLength), oldest first
  NotifyBuffer buffer_;
  // Entries held when the first change arrived for a waiting request:
  // that request completes with them alone, as if it had completed at that
  // change (MS-FSA 2.1.5.11.1), however many more the same read brought. 0: none yet.
  size_t first_change_end_ = 0;
  void mark_first_change(size_t held_before);
  std::shared_ptr<state::FileNode> node_;  // the watched directory's, once attached
  bool delivery_posted_ = false;
  bool over_limit_logged_ = false;
  int last_errno_ = 0;  // of the last watch that failed
};

// CLOSE (close_open): OPEN's watch ends (its waiting requests were withdrawn).
void drop_notify_watch(ConnState& conn, uint64_t volatile_id);
// Directory NODE became delete pending: the CHANGE_NOTIFYs waiting on it,
// on whichever connection and worker, complete with STATUS_DELETE_PENDING
// (as Windows does; smb2.notify.rmdir*). Costs one relaxed load when
// nobody watches it.
void notify_delete_pending(ServerContext& server, const std::shared_ptr<state::FileNode>& node);

}  // namespace ringsmb::smb2
