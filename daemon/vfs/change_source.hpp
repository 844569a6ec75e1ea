// Where changes to directories come from: a small interface, so that
// CHANGE_NOTIFY (smb2/notify_watch.*) and directory lease breaks for
// local changes (smb2/directory_lease.*) share one source per worker. The inotify implementation is
// vfs/inotify_source.*; tests can feed a subscriber by hand.
//
// Everything runs on the thread that owns the source (a worker): it reads
// the kernel's events when the reactor says its descriptor is readable and
// calls the subscribers there, so no thread waits for changes.
#pragma once

#include <cstdint>
#include <expected>
#include <string_view>

namespace ringsmb::vfs {

// One change, in inotify's terms (sys/inotify.h IN_* bits).
struct DirChange {
  // IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO, IN_MODIFY, IN_ATTRIB,
  // with IN_ISDIR when the entry is a directory; IN_DELETE_SELF /
  // IN_MOVE_SELF for the watched directory itself; IN_IGNORED when the
  // kernel dropped the watch (the directory is gone).
  uint32_t mask = 0;
  uint32_t cookie = 0;    // pairs an IN_MOVED_FROM with its IN_MOVED_TO
  std::string_view name;  // the entry in the watched directory; empty: the directory itself
};

class ChangeSubscriber {
 public:
  virtual ~ChangeSubscriber() = default;
  // A change in the directory this subscriber watches as TAG.
  virtual void on_change(uint64_t tag, const DirChange& change) = 0;
  // Changes were lost (the kernel's queue overflowed).
  virtual void on_lost_changes() = 0;
  // Everything read at once has been handed out: both halves of a rename
  // seen in that read have been reported.
  virtual void on_batch_end() = 0;
};

using WatchHandle = uint64_t;

class ChangeSource {
 public:
  virtual ~ChangeSource() = default;
  // Watches directory DIR_FD (its entries and itself) for MASK (IN_* bits)
  // on behalf of SUB, which sees its changes with TAG (only those MASK
  // names, and the directory's own end). Errors (-errno):
  // ENOSPC the kernel's fs.inotify.max_user_watches is reached, EEXIST SUB
  // already watches that directory (a bind mount looping back), EMFILE no
  // inotify instance (fs.inotify.max_user_instances).
  virtual std::expected<WatchHandle, int> watch(int dir_fd, uint32_t mask, ChangeSubscriber* sub, uint64_t tag) = 0;
  // Ends one watch of a subscriber; SUB sees no change for it afterwards.
  virtual void unwatch(WatchHandle h) = 0;
};

}  // namespace ringsmb::vfs
