// The server's own metadata changes, told to CHANGE_NOTIFY watchers with
// the filter Windows reports them under (MS-FSA 2.1.5.14.2: a changed
// CreationTime is FILE_NOTIFY_CHANGE_CREATION, LastAccessTime
// LAST_ACCESS, LastWriteTime LAST_WRITE, FileAttributes ATTRIBUTES,
// ChangeTime nothing; a security descriptor SECURITY).
//
// Why the server says it itself: inotify reports such a change (if it
// reaches the disk at all) as one IN_ATTRIB, which cannot tell an
// attribute from a time, an ACL or a stream; HIDDEN/SYSTEM/ARCHIVE on a
// share without "store dos attributes" never reach the disk. So SET_INFO
// records the change in OwnChanges before it touches the file, and tells
// the watchers of the file's directory (and the WATCH_TREE watchers above
// it), on whichever worker, with the exact filter; each watch then drops
// the IN_ATTRIB the same change brings for that name (whichever comes
// first), so each watcher sees one FILE_ACTION_MODIFIED under the right
// filter only.
//
// Cost: one relaxed atomic load (FileTable::notify_watched) while no
// directory is watched anywhere.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// Names the server changed recently: (directory dev, ino, name) -> until
// when (monotonic ms). Process-wide, mutex-guarded. Two tables: process()
// holds the names whose IN_ATTRIB a SET_INFO caused (only while something
// is watched); entries() the entries the server created, deleted, renamed
// or closed after writing in a leased directory, whose inotify events must
// not break its directory leases again (smb2/leases/directory_lease.hpp).
class OwnChanges {
 public:
  explicit OwnChanges(int64_t hold_ms) : hold_ms_(hold_ms) {}
  void add(uint64_t dev, uint64_t ino, std::string_view name, int64_t now_ms);
  // Did the server change NAME of directory (DEV, INO) within the hold time?
  bool recent(uint64_t dev, uint64_t ino, std::string_view name, int64_t now_ms);
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  static OwnChanges& process();
  static OwnChanges& entries();

 private:
  static std::string key(uint64_t dev, uint64_t ino, std::string_view name);
  const int64_t hold_ms_;
  std::mutex mu_;
  std::unordered_map<std::string, int64_t> until_;
  std::atomic<size_t> count_{0};
};

// The filter a FileBasicInformation SET_INFO reports under (MS-FSA
// 2.1.5.14.2), for a file whose attributes were ORIGINAL_ATTRS; 0: nothing
// to report. Times <= 0 (0 unchanged, -1/-2 freeze and thaw) change nothing.
uint32_t basic_info_filter(uint32_t original_attrs, uint64_t creation, uint64_t access, uint64_t write,
                           uint32_t attrs);

// SET_INFO is about to change metadata of PATH (relative to share root
// ROOT_FD): its IN_ATTRIB will be dropped by the watches. Returns false
// (and records nothing) when nobody watches.
bool note_own_change(ServerContext& server, int root_fd, const std::string& path);
// ... and has changed it: the watchers of its directory (and WATCH_TREE
// watchers above) get FILE_ACTION_MODIFIED for it if FILTER matches theirs.
void report_own_change(ServerContext& server, int root_fd, const std::string& path, uint32_t filter);

}  // namespace ringsmb::smb2
