// The names the server itself changed lately, so that the inotify events
// of its own changes can be told apart from others' (CHANGE_NOTIFY,
// smb2/notify/notify_report.hpp; directory leases, smb2/leases/directory_lease.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

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

}  // namespace ringsmb::smb2
