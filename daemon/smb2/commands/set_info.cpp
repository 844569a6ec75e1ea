// SMB2 SET_INFO (MS-SMB2 2.2.39, 2.2.40, 3.3.5.21; MS-FSA 2.1.5.14).
//
// File classes: Basic (times, READONLY), EndOfFile, Allocation,
// Disposition(Ex), Rename(Ex), Position, Mode, FullEa (vfs/ea_store.hpp;
// EAS_NOT_SUPPORTED where they cannot be stored), Link (smb2/links/hard_link.hpp).
//
// Deliberate differences from Windows:
//  - CreationTime and ChangeTime, which Linux cannot set, are kept in the
//    server-private metadata (vfs/file_meta.hpp). LastWriteTime -1 / -2
//    freeze and thaw it for writes through the handle (smb2/files/frozen_times.hpp);
//    for the other times -1 and -2 are accepted and change nothing.
//  - HIDDEN, SYSTEM and ARCHIVE are kept in user.DOSATTRIB on shares with
//    "store dos attributes = yes" (smb2/files/share_options.hpp), otherwise in the
//    server-private metadata where they differ from what the mode implies;
//    READONLY on a file clears all write bits, clearing it restores the
//    owner's.
//  - An AllocationSize below EndOfFile truncates the file (MS-FSA
//    2.1.5.15.1, as Windows); one above reserves space (fallocate
//    KEEP_SIZE); allocation beyond EndOfFile is not given back at the last
//    close.
//  - Renaming a directory with open files below it fails with ACCESS_DENIED
//    as on Windows, but only this connection's opens are known by path.
//    Handles below that only a lease with H keeps open are broken and
//    waited for first (break_handles_below).
//  - A file's rename fails with SHARING_VIOLATION while its directory is
//    open with DELETE access (Windows' internal parent open); a
//    directory's rename does not (Samba's behaviour; check_parent_sharing).
//  - A rename waits (async) for the handle-caching breaks it starts.
//  - Security descriptors: smb2/security/security_info.cpp (stored in an xattr when
//    the mode cannot express them; docs/security.md).
//
// Opens that hold an O_PATH fd (attribute-only opens) cannot futimens/fchmod;
// those go through /proc/self/fd/N.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/commands/set_info_rename.hpp"
#include "smb2/links/hard_link.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/files/frozen_times.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/notify/notify_buffer.hpp"
#include "smb2/notify/notify_report.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/quota/quota.hpp"
#include "smb2/security/security_info.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "smb2/streams/stream_io.hpp"
#include "vfs/allocation.hpp"
#include "vfs/directory_empty.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

using vfs::FileInfoClass;

constexpr uint32_t FILE_ATTRIBUTE_TEMPORARY = 0x100;
// FILE_DISPOSITION_INFORMATION_EX flags (MS-FSCC 2.4.12).
constexpr uint32_t FILE_DISPOSITION_DELETE = 0x1;
constexpr uint32_t FILE_DISPOSITION_ON_CLOSE = 0x8;
constexpr uint32_t FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE = 0x10;
constexpr uint32_t kValidDispositionExFlags = 0x1F;
// FileModeInformation (MS-FSCC 2.4.31): what may be set, and what sticks.
constexpr uint32_t FILE_WRITE_THROUGH = 0x2, FILE_SEQUENTIAL_ONLY = 0x4;
constexpr uint32_t kSettableModeBits = 0x3E;

// FILETIME sentinels of FILE_BASIC_INFORMATION (MS-FSCC 2.4.7); 0 (leave
// the time unchanged) is tested as such.
constexpr int64_t kTimeStopUpdating = -1, kTimeResumeUpdating = -2;

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

int set_times(int fd, const struct timespec ts[2]) {
  if (futimens(fd, ts) == 0) return 0;
  if (errno != EBADF) return errno;
  if (utimensat(AT_FDCWD, proc_fd_path(fd).c_str(), ts, 0) == 0) return 0;
  return errno;
}

int set_mode(int fd, mode_t mode) {
  if (fchmod(fd, mode) == 0) return 0;
  if (errno != EBADF) return errno;
  if (fchmodat(AT_FDCWD, proc_fd_path(fd).c_str(), mode, 0) == 0) return 0;
  return errno;
}

bool valid_time(uint64_t t) { return int64_t(t) >= kTimeResumeUpdating; }
bool time_given(uint64_t t) { return int64_t(t) > 0; }

// -1 freezes LastWriteTime for writes through this handle, -2 thaws it;
// an explicit time while frozen becomes the frozen time.
NtStatus freeze_write_time(state::Open& open, uint64_t write) {
  if (int64_t(write) == kTimeResumeUpdating) {
    open.frozen_write_time.reset();
  } else if (int64_t(write) == kTimeStopUpdating) {
    auto st = vfs::stat_fd(open.fd.get());
    if (!st) return st.error();
    open.frozen_write_time = st->last_write_time;
  } else if (time_given(write) && open.frozen_write_time) {
    open.frozen_write_time = write;
  }
  return NtStatus::Success;
}

// ST: the file as stat'ed for its READONLY (mode as set), for store_client_meta.
NtStatus set_basic(state::Open& open, ByteSpan buf, std::optional<vfs::FileStat>& st) {
  if (buf.size() < 40) return NtStatus::InfoLengthMismatch;
  ByteReader r(buf);
  uint64_t creation = r.u64(), access = r.u64(), write = r.u64(), change = r.u64();
  uint32_t attrs = r.u32();
  for (uint64_t t : {creation, access, write, change})
    if (!valid_time(t)) return NtStatus::InvalidParameter;
  if (attrs & vfs::FILE_ATTRIBUTE_DIRECTORY && !open.is_directory) return NtStatus::InvalidParameter;
  if (attrs & FILE_ATTRIBUTE_TEMPORARY && open.is_directory) return NtStatus::InvalidParameter;
  if (NtStatus s = freeze_write_time(open, write); s != NtStatus::Success) return s;

  int fd = open.fd.get();
  if (time_given(access) || time_given(write)) {
    struct timespec ts[2];
    ts[0] = time_given(access) ? vfs::filetime_to_timespec(access) : timespec{0, UTIME_OMIT};
    ts[1] = time_given(write) ? vfs::filetime_to_timespec(write) : timespec{0, UTIME_OMIT};
    if (int err = set_times(fd, ts)) return nt_status_from_errno(err);
  }
  if (attrs != 0 && !open.is_directory) {
    auto stat = vfs::stat_fd(fd);
    if (!stat) return stat.error();
    st = *stat;
    if (S_ISREG(st->mode)) {
      mode_t mode = st->mode & 07777;
      mode_t want = (attrs & vfs::FILE_ATTRIBUTE_READONLY) ? (mode & ~mode_t(0222))
                    : (mode & S_IWUSR)                     ? mode
                                                           : (mode | S_IWUSR);
      if (want != mode) {
        if (int err = set_mode(fd, want)) return nt_status_from_errno(err);
        st->mode = (st->mode & ~07777u) | want;
      }
    }
  }
  return NtStatus::Success;
}

// CreationTime and ChangeTime, which Linux cannot set, go to the file's
// server-private metadata (vfs/file_meta.hpp); written last, after every
// other change of this request has moved the ctime. A CreationTime equal to
// the birth time statx reports is not stored. So do, on shares without
// "store dos attributes", the attributes the mode cannot express (HIDDEN,
// SYSTEM, ARCHIVE), only where they differ from what the mode implies. A
// filesystem without trusted.* xattrs keeps nothing (logged once), as
// Windows' FAT does not. ST: the file as set_basic left it, if it stat'ed it.
NtStatus store_client_meta(state::Open& open, ByteSpan buf, bool keep_attributes, std::optional<vfs::FileStat> st) {
  ByteReader r(buf);
  uint64_t creation = r.u64(), access = r.u64(), write = r.u64();
  uint64_t change = r.u64();
  uint32_t attrs = r.u32();  // 0: leave them (MS-FSCC 2.4.7)
  // A ChangeTime set through this handle outlives what this request
  // changes through it (Open.UserSetChangeTime): its validity is renewed.
  const bool renew_change = open.user_set_change_time && !time_given(change) &&
                            (time_given(access) || time_given(write) || attrs != 0);
  keep_attributes = keep_attributes && attrs != 0;
  if (!time_given(creation) && !time_given(change) && !keep_attributes && !renew_change) return NtStatus::Success;
  int fd = open.fd.get();
  vfs::FileMeta meta = stored_meta(open);
  bool changed = false;
  if (renew_change && meta.change_time) {
    meta.change_valid_until = vfs::filetime_now() + vfs::kChangeTimeGraceNs / 100;
    changed = true;
  }
  if (!st && ((time_given(creation) && meta.creation_time != creation) || keep_attributes)) {
    auto s = vfs::stat_fd(fd);
    if (!s) return s.error();
    st = *s;
  }
  if (time_given(creation) && meta.creation_time != creation &&
      (meta.creation_time || st->creation_time != creation)) {
    meta.creation_time = creation;
    changed = true;
  }
  if (time_given(change)) {
    meta.change_time = change;
    meta.change_valid_until = vfs::filetime_now() + vfs::kChangeTimeGraceNs / 100;
    open.user_set_change_time = true;
    changed = true;
  }
  if (keep_attributes) {
    auto keep = vfs::dos_attributes_to_keep(attrs, vfs::dos_attributes(*st, {}, false));
    changed = changed || keep != meta.dos_attributes;
    meta.dos_attributes = keep;
  }
  if (!changed) return NtStatus::Success;
  int err = write_stored_meta(open, meta);
  if (err == 0) return NtStatus::Success;
  if (err == ENOTSUP || err == EPERM) {
    static std::atomic<bool> logged{false};
    if (!logged.exchange(true)) LOG_WARN("CreationTime/ChangeTime/attributes not kept: %s: %s", vfs::kFileMetaXattr, strerror(err));
    return NtStatus::Success;
  }
  return nt_status_from_errno(err);
}

NtStatus read_u64(ByteSpan buf, uint64_t& v) {
  if (buf.size() < 8) return NtStatus::InfoLengthMismatch;
  v = load_le64(buf.data());
  return NtStatus::Success;
}

// A shrink of a large file frees its blocks, which takes milliseconds
// (~87 ms for 100 MiB on ext4 with discard; issue 14). Alone in its frame,
// with a pool and room to wait, its ftruncate runs on the connection's
// write lane and the SET_INFO answers when it is done; until then the
// connection's later requests wait, as behind a large WRITE
// (smb2/engine/async_write.hpp), so they see the new size.
constexpr uint8_t kSetInfoResponse[2] = {2, 0};  // StructureSize 2 (2.2.40)
constexpr int64_t kInterimDelayMs = 5;

void finish_truncate(ConnState& conn, uint64_t async_id, uint64_t volatile_id, NtStatus status) {
  --conn.writes_in_flight;
  auto it = conn.tables->opens.find(volatile_id);
  if (status == NtStatus::Success && it != conn.tables->opens.end() && it->second->frozen_write_time) {
    become_owner_of(conn, *it->second);
    restore_frozen_times(*it->second);
  }
  complete(conn, async_id, status, kSetInfoResponse);
}

NtStatus truncate_async(Request& req, const state::Open& open, uint64_t size) {
  return run_on_write_lane(
      req, open, kInterimDelayMs,
      [size](int fd) { return ftruncate(fd, off_t(size)) == 0 ? NtStatus::Success : nt_status_from_errno(errno); },
      [vid = open.volatile_id](ConnState& c, uint64_t id, NtStatus status) { finish_truncate(c, id, vid, status); });
}

// Sets OPEN's file to SIZE bytes: inline, or on the pool for a large file
// that gives back kLargeFileBytes or more (only a large one pays the fstat).
NtStatus truncate_to(Request& req, const state::Open& open, uint64_t size) {
  if (open.large && req.server.blocking && req.hdr.next_command == 0 && !req.compound.in_chain) {
    struct stat st;
    if (fstat(open.fd.get(), &st) != 0) return nt_status_from_errno(errno);
    if (uint64_t(st.st_blocks) * 512 >= size + state::kLargeFileBytes && has_room_to_wait(req))
      return truncate_async(req, open, size);
  }
  if (ftruncate(open.fd.get(), off_t(size)) != 0) return nt_status_from_errno(errno);
  restore_frozen_times(open);
  return NtStatus::Success;
}

NtStatus set_end_of_file(Request& req, const state::Open& open, ByteSpan buf) {
  uint64_t eof;
  if (NtStatus s = read_u64(buf, eof); s != NtStatus::Success) return s;
  if (open.is_directory || eof > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  return truncate_to(req, open, eof);
}

// MS-FSA 2.1.5.15.1: an AllocationSize below EndOfFile truncates the file
// to it; one above reserves the space (vfs/allocation.hpp).
NtStatus set_allocation(Request& req, state::Open& open, ByteSpan buf) {
  uint64_t size;
  if (NtStatus s = read_u64(buf, size); s != NtStatus::Success) return s;
  if (open.is_directory || size > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  struct stat st;
  if (fstat(open.fd.get(), &st) != 0) return nt_status_from_errno(errno);
  if (size < uint64_t(st.st_size)) return truncate_to(req, open, size);
  NtStatus s = vfs::reserve_allocation(open.fd.get(), size);
  if (s == NtStatus::Success) open.note_end(size);  // blocks its last close frees
  return s;
}

NtStatus set_delete_pending(Request& req, state::Open& open, bool pending, bool ignore_readonly) {
  if (pending) {
    if (open.path.empty()) return NtStatus::CannotDelete;  // the share root
    // The unlink waits for the last close, where a refusal reaches no one:
    // the file system's rules are asked now, with the user's identity.
    if (NtStatus s = check_unlink_allowed(*req.tree, open.path); s != NtStatus::Success) return s;
    auto st = vfs::stat_fd(open.fd.get());
    if (!st) return st.error();
    if (!ignore_readonly && (vfs::dos_attributes(*st, {}, false) & vfs::FILE_ATTRIBUTE_READONLY))
      return NtStatus::CannotDelete;
    if (st->is_directory) {
      auto empty = vfs::directory_empty(open.fd.get());
      if (!empty) return empty.error();
      if (!*empty) return NtStatus::DirectoryNotEmpty;
    }
  }
  if (open.node) req.server.files.set_delete_pending(open.node, pending);
  if (open.node && pending && open.is_directory) notify_delete_pending(req.server, open.node);
  return NtStatus::Success;
}

NtStatus set_disposition(Request& req, state::Open& open, ByteSpan buf) {
  if (buf.size() < 1) return NtStatus::InfoLengthMismatch;
  return set_delete_pending(req, open, buf[0] != 0, false);
}

NtStatus set_disposition_ex(Request& req, state::Open& open, ByteSpan buf) {
  if (buf.size() < 4) return NtStatus::InfoLengthMismatch;
  uint32_t flags = load_le32(buf.data());
  if (flags & ~kValidDispositionExFlags) return NtStatus::InvalidParameter;
  // ON_CLOSE and POSIX_SEMANTICS both end in the delete at the last close here.
  (void)FILE_DISPOSITION_ON_CLOSE;
  return set_delete_pending(req, open, flags & FILE_DISPOSITION_DELETE,
                            flags & FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE);
}

// ---- other file classes ----------------------------------------------------

NtStatus set_position(state::Open& open, ByteSpan buf) {
  uint64_t pos;
  if (NtStatus s = read_u64(buf, pos); s != NtStatus::Success) return s;
  if (pos > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  open.position = pos;
  return NtStatus::Success;
}

NtStatus set_mode_info(state::Open& open, ByteSpan buf) {
  if (buf.size() < 4) return NtStatus::InfoLengthMismatch;
  uint32_t mode = load_le32(buf.data());
  if (mode & ~kSettableModeBits) return NtStatus::InvalidParameter;
  constexpr uint32_t kSticky = FILE_WRITE_THROUGH | FILE_SEQUENTIAL_ONLY;
  open.create_options = (open.create_options & ~kSticky) | (mode & kSticky);
  return NtStatus::Success;
}

// MS-FSA 2.1.5.14: a size change ends the other opens' read caching (as a
// write does); a delete ends their handle caching (a rename too, and
// waits: break_handles_before_rename). The breaks are sent; this request
// does not wait for them.
void break_caching(Request& req, state::Open& open, FileInfoClass cls) {
  if (!open.node || !open.node->lease_count.load(std::memory_order_relaxed)) return;
  auto& files = req.server.files;
  int64_t now = monotonic_ms(), timeout = req.server.lease_break_timeout_ms;
  switch (cls) {
    case FileInfoClass::EndOfFile:
    case FileInfoClass::Allocation:
      post_breaks(req.server, files.break_readers(open.node, &open, now, timeout), req.conn);
      break;
    case FileInfoClass::Disposition:
    case FileInfoClass::DispositionEx:
      post_breaks(req.server, files.break_handles(open.node, &open, now, timeout), req.conn);
      break;
    default: break;
  }
}

// FileFullEaInformation (MS-FSA 2.1.5.15.4): the whole list is checked
// before any EA changes; an entry without a value removes that EA.
NtStatus set_full_ea(const state::Tree& tree, const state::Open& open, ByteSpan buf) {
  if (!tree.eas) return NtStatus::EasNotSupported;  // FILE_SUPPORTS_EXTENDED_ATTRIBUTES is not advertised
  std::vector<vfs::Ea> eas;
  if (NtStatus s = vfs::parse_full_ea_list(buf, eas); s != NtStatus::Success) return s;
  return vfs::write_eas(open.fd.get(), eas);
}

// The DOS attributes a client sees for OPEN now (to tell whether a
// SET_INFO changes them); 0 when the file cannot be read.
uint32_t current_attributes(const state::Tree& tree, const state::Open& open) {
  auto st = vfs::stat_fd(open.fd.get());
  if (!st) return 0;
  std::string_view parent, leaf;
  vfs::split_parent(open.path, parent, leaf);
  st->attributes = reported_attributes(tree.share, *st, leaf, open.fd.get());
  apply_stored_metadata(*st, open);
  return st->attributes;
}

// The change each settable file class makes (access_check.hpp decides who
// may); Position and Mode only change the handle.
std::optional<Change> change_of(FileInfoClass cls) {
  switch (cls) {
    case FileInfoClass::Basic: return Change::BasicInfo;
    case FileInfoClass::EndOfFile: return Change::EndOfFile;
    case FileInfoClass::Allocation: return Change::Allocation;
    case FileInfoClass::Disposition:
    case FileInfoClass::DispositionEx: return Change::Delete;
    case FileInfoClass::Rename:
    case FileInfoClass::RenameEx: return Change::Rename;
    case FileInfoClass::FullEa: return Change::ExtendedAttributes;
    case FileInfoClass::Link: return Change::CreateName;
    default: return std::nullopt;
  }
}

NtStatus set_file_info(Request& req, state::Open& open, FileInfoClass cls, ByteSpan buf) {
  if (auto change = change_of(cls))
    if (NtStatus s = check_change(*req.tree, open, *change); s != NtStatus::Success) return s;
  if (cls == FileInfoClass::Rename || cls == FileInfoClass::RenameEx)
    if (NtStatus s = break_handles_before_rename(req, open); s != NtStatus::Success) return s;
  break_caching(req, open, cls);
  if (cls == FileInfoClass::Basic || cls == FileInfoClass::EndOfFile || cls == FileInfoClass::Allocation) {
    open.entry_changed = true;  // the directory's listing shows it: its leases break at close
    update_write_time_now(open);  // as Windows: even a Basic with no time given
  }
  if (open.stream)
    if (auto s = set_stream_info(req, open, cls, buf)) return *s;
  switch (cls) {
    case FileInfoClass::Basic: {
      // Watched: the change is told to the watchers with its own filter.
      uint32_t original_attrs = 0;
      bool watched = buf.size() >= 40 && note_own_change(req.server, req.tree->root.get(), open.path);
      if (watched) original_attrs = current_attributes(*req.tree, open);
      std::optional<vfs::FileStat> st;
      NtStatus s = set_basic(open, buf, st);
      if (s == NtStatus::Success && int64_t(load_le64(buf.data() + 16)) > 0)
        write_time_was_set(open, load_le64(buf.data() + 16));
      // FileAttributes 0 means "leave them" (MS-FSCC 2.4.7).
      if (s == NtStatus::Success && req.tree->share.store_dos_attributes && load_le32(buf.data() + 32) != 0)
        s = store_dos_attributes(*req.tree, open.fd.get(), load_le32(buf.data() + 32));
      if (s == NtStatus::Success) s = store_client_meta(open, buf, !req.tree->share.store_dos_attributes, st);
      if (s == NtStatus::Success && watched)
        report_own_change(req.server, req.tree->root.get(), open.path,
                          basic_info_filter(original_attrs, load_le64(buf.data()), load_le64(buf.data() + 8),
                                            load_le64(buf.data() + 16), load_le32(buf.data() + 32)));
      return s;
    }
    case FileInfoClass::EndOfFile: return set_end_of_file(req, open, buf);
    case FileInfoClass::Allocation: return set_allocation(req, open, buf);
    case FileInfoClass::Disposition: return set_disposition(req, open, buf);
    case FileInfoClass::DispositionEx: return set_disposition_ex(req, open, buf);
    case FileInfoClass::Rename: return set_rename(req, open, buf, false);
    case FileInfoClass::RenameEx: return set_rename(req, open, buf, true);
    case FileInfoClass::Position: return set_position(open, buf);
    case FileInfoClass::Mode: return set_mode_info(open, buf);
    case FileInfoClass::Link: return set_hard_link(req, open, buf, false);
    case FileInfoClass::FullEa: return set_full_ea(*req.tree, open, buf);
    default: return NtStatus::InvalidInfoClass;
  }
}

}  // namespace

NtStatus handle_set_info(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint8_t info_type = r.u8();
  uint8_t info_class = r.u8();
  uint32_t buf_len = r.u32();
  uint16_t buf_off = r.u16();
  r.skip(2);
  uint32_t additional = r.u32();
  r.skip(16);  // FileId: Request::open
  ByteSpan buf;
  if (!r.ok() || !buffer_at(req, buf_off, buf_len, buf)) return NtStatus::InvalidParameter;
  if (buf_len > negotiated_sizes(req.conn, req.server).max_trans) return NtStatus::InvalidParameter;
  state::Open* open = req.open;
  // The quota index takes quota entries alone.
  if (open->quota_file && info_type != wire::SMB2_0_INFO_QUOTA) return NtStatus::InvalidInfoClass;

  NtStatus st;
  if (find_pipe(req.conn, *open)) st = set_pipe_info(req.conn, *open, info_type, info_class, buf);
  else switch (info_type) {
    case wire::SMB2_0_INFO_FILE: st = set_file_info(req, *open, FileInfoClass(info_class), buf); break;
    case wire::SMB2_0_INFO_SECURITY: {
      bool watched = note_own_change(req.server, req.tree->root.get(), open->path);
      st = set_security_info(req, *open, additional, buf, fruit::nfs_aces_on(req));
      if (st == NtStatus::Success && watched)
        report_own_change(req.server, req.tree->root.get(), open->path, FILE_NOTIFY_CHANGE_SECURITY);
      break;
    }
    case wire::SMB2_0_INFO_QUOTA: st = set_quota(req, *open, buf); break;
    case wire::SMB2_0_INFO_FILESYSTEM: return NtStatus::NotSupported;
    default: return NtStatus::InvalidParameter;
  }
  if (st != NtStatus::Success) return st;
  w.u16(2);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
