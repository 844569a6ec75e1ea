#include "smb2/notify_buffer.hpp"

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

void NotifyBuffer::add(uint32_t action, std::string_view name) {
  if (overflowed_) return;
  Bytes utf16;
  unicode::utf8_to_utf16le(name, utf16);
  for (size_t i = 0; i + 1 < utf16.size(); i += 2)
    if (utf16[i] == '/' && utf16[i + 1] == 0) utf16[i] = '\\';
  if (action == FILE_ACTION_MODIFIED && !entries_.empty() && entries_.back().action == action &&
      entries_.back().name == utf16)
    return;
  size_t n = notify_entry_bytes(utf16.size());
  if (bytes_ + n > cap_) return overflow();
  bytes_ += n;
  entries_.push_back({action, std::move(utf16)});
}

NtStatus NotifyBuffer::take_first(size_t count, uint32_t max_output, Bytes& out) {
  count = std::min(count, entries_.size());
  size_t bytes = 0;
  for (size_t i = 0; i < count; ++i) bytes += notify_entry_bytes(entries_[i].name.size());
  if (overflowed_ || bytes > max_output) {
    entries_.clear();
    bytes_ = 0;
    overflowed_ = false;
    return NtStatus::NotifyEnumDir;
  }
  ByteWriter w(out);
  for (size_t i = 0; i < count; ++i) {
    const Entry& e = entries_[i];
    size_t n = notify_entry_bytes(e.name.size());
    w.u32(i + 1 < count ? uint32_t(n) : 0);  // NextEntryOffset
    w.u32(e.action);
    w.u32(uint32_t(e.name.size()));
    w.bytes(e.name);
    for (size_t pad = kEntryHeaderBytes + e.name.size(); pad < n; ++pad) w.u8(0);
  }
  entries_.erase(entries_.begin(), entries_.begin() + ptrdiff_t(count));
  bytes_ -= bytes;
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
