#include "smb2/notify/notify_buffer.hpp"

#include <sys/inotify.h>

#include <algorithm>

#include "common/unicode.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kEntryHeaderBytes = 12;  // NextEntryOffset, Action, FileNameLength

// What an IN_ATTRIB (chmod, chown, utimes, an xattr: DOS attributes,
// security descriptors, streams) may be: inotify does not say which.
constexpr uint32_t kAttribFilters = FILE_NOTIFY_CHANGE_ATTRIBUTES | FILE_NOTIFY_CHANGE_LAST_WRITE |
                                    FILE_NOTIFY_CHANGE_LAST_ACCESS | FILE_NOTIFY_CHANGE_CREATION |
                                    FILE_NOTIFY_CHANGE_EA | FILE_NOTIFY_CHANGE_SECURITY |
                                    FILE_NOTIFY_CHANGE_STREAM_NAME | FILE_NOTIFY_CHANGE_STREAM_SIZE |
                                    FILE_NOTIFY_CHANGE_STREAM_WRITE;
constexpr uint32_t kModifyFilters = FILE_NOTIFY_CHANGE_SIZE | FILE_NOTIFY_CHANGE_LAST_WRITE;

}  // namespace

std::optional<NotifyAction> notify_action(uint32_t mask, bool paired) {
  uint32_t name_filter = (mask & IN_ISDIR) ? FILE_NOTIFY_CHANGE_DIR_NAME : FILE_NOTIFY_CHANGE_FILE_NAME;
  if (mask & IN_CREATE) return NotifyAction{FILE_ACTION_ADDED, name_filter};
  if (mask & IN_DELETE) return NotifyAction{FILE_ACTION_REMOVED, name_filter};
  if (mask & IN_MOVED_FROM)
    return NotifyAction{paired ? FILE_ACTION_RENAMED_OLD_NAME : FILE_ACTION_REMOVED, name_filter};
  if (mask & IN_MOVED_TO) return NotifyAction{paired ? FILE_ACTION_RENAMED_NEW_NAME : FILE_ACTION_ADDED, name_filter};
  if (mask & IN_MODIFY) return NotifyAction{FILE_ACTION_MODIFIED, kModifyFilters};
  if (mask & IN_ATTRIB) return NotifyAction{FILE_ACTION_MODIFIED, kAttribFilters};
  return std::nullopt;
}

uint32_t inotify_mask_for(uint32_t filter) {
  uint32_t mask = 0;
  if (filter & (FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME))
    mask |= IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
  if (filter & kModifyFilters) mask |= IN_MODIFY;
  if (filter & kAttribFilters) mask |= IN_ATTRIB;
  if (filter & FILE_NOTIFY_CHANGE_ATTRIBUTES) mask |= IN_MOVED_TO;  // a renamed file is MODIFIED (rename_reported_as_modified)
  return mask;
}

// Windows sets FILE_ATTRIBUTE_ARCHIVE on a file it renames and reports
// that under FILE_NOTIFY_CHANGE_ATTRIBUTES as a FILE_ACTION_MODIFIED of the
// new name, to a watcher that does not see the rename itself: one whose
// filter has ATTRIBUTES but not FILE_NAME (smb2.notify.mask-change). A
// watcher with FILE_NAME sees RENAMED_OLD_NAME/NEW_NAME (or REMOVED/ADDED)
// and no MODIFIED beside them (smb2.notify.rec); a directory's rename is
// never an attribute change.
bool rename_reported_as_modified(uint32_t mask, uint32_t filter) {
  return (mask & IN_MOVED_TO) && !(mask & IN_ISDIR) && (filter & FILE_NOTIFY_CHANGE_ATTRIBUTES) &&
         !(filter & FILE_NOTIFY_CHANGE_FILE_NAME);
}

size_t notify_entry_bytes(size_t name_utf16_bytes) { return (kEntryHeaderBytes + name_utf16_bytes + 3) & ~size_t(3); }

bool NotifyBuffer::make_room(size_t extra) {
  const size_t need = data_.size() + extra;
  if (need <= data_.capacity()) return true;
  const size_t grown = std::min(std::max({need, data_.capacity() * 2, size_t(256)}), std::max(cap_, need));
  const size_t more = grown - data_.capacity();
  if (memory_ && memory_->held_bytes + more > memory_->limit_bytes) return false;
  if (memory_) memory_->held_bytes += more;
  data_.reserve(grown);
  return true;
}

void NotifyBuffer::release() {
  if (memory_) memory_->held_bytes -= data_.capacity();
  Bytes().swap(data_);
  count_ = 0;
  last_at_ = 0;
}

void NotifyBuffer::add(uint32_t action, std::string_view name) {
  if (overflowed_) return;
  thread_local Bytes utf16;  // the worker's scratch: no allocation per change
  utf16.clear();
  unicode::utf8_to_utf16le(name, utf16);
  for (size_t i = 0; i + 1 < utf16.size(); i += 2)
    if (utf16[i] == '/' && utf16[i + 1] == 0) utf16[i] = '\\';
  if (action == FILE_ACTION_MODIFIED && count_ && load_le32(&data_[last_at_ + 4]) == action &&
      load_le32(&data_[last_at_ + 8]) == utf16.size() &&
      std::equal(utf16.begin(), utf16.end(), data_.begin() + ptrdiff_t(last_at_ + kEntryHeaderBytes)))
    return;
  const size_t n = notify_entry_bytes(utf16.size());
  if (data_.size() + n > cap_ || !make_room(n)) return overflow();
  const size_t at = data_.size();
  ByteWriter w(data_);
  w.u32(uint32_t(n));  // NextEntryOffset: this entry's size while held
  w.u32(action);
  w.u32(uint32_t(utf16.size()));
  w.bytes(utf16);
  data_.resize(at + n);  // the padding: zeros
  last_at_ = at;
  ++count_;
}

NtStatus NotifyBuffer::take_first(size_t count, uint32_t max_output, Bytes& out) {
  count = std::min(count, count_);
  size_t bytes = 0, last = 0;
  for (size_t i = 0; i < count; ++i) {
    last = bytes;
    bytes += load_le32(&data_[bytes]);
  }
  if (overflowed_ || bytes > max_output) {
    release();
    overflowed_ = false;
    return NtStatus::NotifyEnumDir;
  }
  if (count == 0) return NtStatus::Success;
  const size_t start = out.size();
  out.insert(out.end(), data_.begin(), data_.begin() + ptrdiff_t(bytes));
  store_le32(&out[start + last], 0);  // the last entry of the list
  if (count == count_) {
    release();  // the common case: everything went; the memory goes back too
    return NtStatus::Success;
  }
  data_.erase(data_.begin(), data_.begin() + ptrdiff_t(bytes));
  count_ -= count;
  last_at_ -= bytes;
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
