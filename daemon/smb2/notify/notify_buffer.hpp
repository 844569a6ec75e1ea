// The changes a CHANGE_NOTIFY open has seen but not yet reported (MS-FSA
// 2.1.5.11: ChangeNotifyEntry.NotifyEventList), how a change of the
// directory source (vfs::DirChange, inotify's bits) becomes a
// FILE_ACTION_* for a CompletionFilter, and the FILE_NOTIFY_INFORMATION
// list (MS-FSCC 2.7.1) a response carries. No I/O here: unit-tested alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::smb2 {

// MS-SMB2 2.2.35 CompletionFilter.
enum : uint32_t {
  FILE_NOTIFY_CHANGE_FILE_NAME = 0x001,
  FILE_NOTIFY_CHANGE_DIR_NAME = 0x002,
  FILE_NOTIFY_CHANGE_ATTRIBUTES = 0x004,
  FILE_NOTIFY_CHANGE_SIZE = 0x008,
  FILE_NOTIFY_CHANGE_LAST_WRITE = 0x010,
  FILE_NOTIFY_CHANGE_LAST_ACCESS = 0x020,
  FILE_NOTIFY_CHANGE_CREATION = 0x040,
  FILE_NOTIFY_CHANGE_EA = 0x080,
  FILE_NOTIFY_CHANGE_SECURITY = 0x100,
  FILE_NOTIFY_CHANGE_STREAM_NAME = 0x200,
  FILE_NOTIFY_CHANGE_STREAM_SIZE = 0x400,
  FILE_NOTIFY_CHANGE_STREAM_WRITE = 0x800,
  kValidCompletionFilter = 0xFFF,
};

// MS-FSCC 2.7.1 Action.
enum : uint32_t {
  FILE_ACTION_ADDED = 1,
  FILE_ACTION_REMOVED = 2,
  FILE_ACTION_MODIFIED = 3,
  FILE_ACTION_RENAMED_OLD_NAME = 4,
  FILE_ACTION_RENAMED_NEW_NAME = 5,
};

// What one source change means for a watcher with a filter. A rename is
// two changes (old and new name); the caller pairs them.
struct NotifyAction {
  uint32_t action = 0;
  uint32_t filter = 0;  // the CompletionFilter bits this change falls under
};
// The action for inotify change MASK (IN_* bits; IN_ISDIR for a
// directory), with PAIRED saying whether a move's other half is inside the
// watch too (then RENAMED_*; else REMOVED / ADDED). None for what no
// filter reports (IN_IGNORED, the watched directory's own events).
std::optional<NotifyAction> notify_action(uint32_t mask, bool paired);
// The inotify mask a CompletionFilter needs.
uint32_t inotify_mask_for(uint32_t completion_filter);
// Is the file that change MASK moved in (IN_MOVED_TO) reported to a
// watcher with FILTER as FILE_ACTION_MODIFIED of its new name (the ARCHIVE
// attribute a rename sets), beside whatever notify_action reports?
bool rename_reported_as_modified(uint32_t mask, uint32_t filter);

// One FILE_NOTIFY_INFORMATION entry: 12 bytes, the name, padding to 4.
size_t notify_entry_bytes(size_t name_utf16_bytes);

// What the change-notify buffers of one connection hold together (the
// capacity of their encoded lists, in bytes), against a bound: a client
// with many watches on busy directories cannot make the server hold more
// (docs/security.md, "Change notification").
struct NotifyMemory {
  size_t held_bytes = 0;
  size_t limit_bytes = SIZE_MAX;
};

// The changes of one open, held as the FILE_NOTIFY_INFORMATION list a
// response carries (one contiguous buffer: no allocation per change).
class NotifyBuffer {
 public:
  NotifyBuffer() = default;
  ~NotifyBuffer() { release(); }
  NotifyBuffer(const NotifyBuffer&) = delete;
  NotifyBuffer& operator=(const NotifyBuffer&) = delete;

  // CAP_BYTES bounds the encoded size held; past it the buffer overflows:
  // its entries are dropped and the next report is STATUS_NOTIFY_ENUM_DIR.
  void set_cap(size_t cap_bytes) { cap_ = cap_bytes; }
  // The connection's account (outlives this buffer); growing past its
  // limit overflows this buffer as the cap does.
  void set_memory(NotifyMemory* memory) { memory_ = memory; }
  // NAME is relative to the watched directory, '/'-separated UTF-8. A
  // MODIFIED entry equal to the last one is not repeated (a large write is
  // many IN_MODIFY).
  void add(uint32_t action, std::string_view name);
  void overflow() {
    release();
    overflowed_ = true;
  }
  bool overflowed() const { return overflowed_; }
  bool has_news() const { return overflowed_ || count_ != 0; }
  bool empty() const { return !has_news(); }
  size_t bytes() const { return data_.size(); }
  // Takes everything for one response of at most MAX_OUTPUT bytes: the
  // FILE_NOTIFY_INFORMATION list into OUT and STATUS_SUCCESS, or
  // STATUS_NOTIFY_ENUM_DIR (nothing in OUT) when it overflowed or does not
  // fit (MS-FSA 2.1.5.11.1). The buffer is empty afterwards.
  NtStatus take(uint32_t max_output, Bytes& out) { return take_first(count_, max_output, out); }
  // The same for the first COUNT entries only; the rest stay held (an
  // overflow still answers NOTIFY_ENUM_DIR and empties it).
  NtStatus take_first(size_t count, uint32_t max_output, Bytes& out);
  size_t count() const { return count_; }

 private:
  // Room for EXTRA more bytes, within the cap and the connection's limit.
  bool make_room(size_t extra);
  // Drops everything and gives the memory back.
  void release();
  // Entries back to back, each with NextEntryOffset set to its own size
  // (the last one's is zeroed in a response).
  Bytes data_;
  size_t count_ = 0;
  size_t last_at_ = 0;  // offset of the last entry, when count_ != 0
  size_t cap_ = 64 * 1024;
  NotifyMemory* memory_ = nullptr;
  bool overflowed_ = false;
};

}  // namespace ringsmb::smb2
