// SMB2 QUERY_DIRECTORY (MS-SMB2 2.2.33, 2.2.34, 3.3.5.18; MS-FSA 2.1.5.6.3).
//
// The enumeration is a snapshot of the names that match the search pattern,
// taken at the first query, on RESTART_SCANS / REOPEN, and when the client
// sends a different pattern. "." and ".." come first, as Windows lists them.
// Each entry is stat'ed only when it is returned, so a huge directory costs
// one readdir pass plus one statx per entry actually sent, and an entry that
// vanished in between is silently skipped.
//
// Symlinks are reported as what they are (statx with AT_SYMLINK_NOFOLLOW):
// a link never exposes its target's metadata, so links pointing outside the
// share leak nothing; opening one is refused by CREATE's confinement.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/engine/output_buffer.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/snapshots/snapshots.hpp"
#include "smb2/fruit/aapl.hpp"
#include "vfs/dir_entries.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"
#include "vfs/xattr_io.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint8_t {
  SMB2_RESTART_SCANS = 0x01,
  SMB2_RETURN_SINGLE_ENTRY = 0x02,
  SMB2_INDEX_SPECIFIED = 0x04,
  SMB2_REOPEN = 0x10,
};

using vfs::FileInfoClass;

// Size of an entry before its FileName (MS-FSCC 2.4); 0 for classes
// QUERY_DIRECTORY does not serve.
size_t fixed_entry_size(FileInfoClass cls) {
  namespace f = vfs::fscc;
  switch (cls) {
    case FileInfoClass::Directory: return f::kDirectoryInfoFixedSize;
    case FileInfoClass::FullDirectory: return f::kFullDirectoryInfoFixedSize;
    case FileInfoClass::BothDirectory: return f::kBothDirectoryInfoFixedSize;
    case FileInfoClass::IdBothDirectory: return f::kIdBothDirectoryInfoFixedSize;
    case FileInfoClass::IdFullDirectory: return f::kIdFullDirectoryInfoFixedSize;
    case FileInfoClass::Names: return f::kNamesInfoFixedSize;
    default: return 0;
  }
}

// Offset of FileNameLength inside an entry.
size_t name_length_field(FileInfoClass cls) { return cls == FileInfoClass::Names ? 8 : 60; }

struct QueryDirectoryRequest {
  FileInfoClass cls{};
  uint8_t flags = 0;
  ByteSpan name;
  uint32_t output_length = 0;
};

NtStatus parse(const Request& req, QueryDirectoryRequest& q) {
  ByteReader r(req.body);
  r.skip(2);
  q.cls = FileInfoClass(r.u8());
  q.flags = r.u8();
  r.u32();  // FileIndex: NTFS ignores it, and so do we
  r.skip(16);  // FileId: Request::open
  uint16_t name_off = r.u16(), name_len = r.u16();
  q.output_length = r.u32();
  if (!r.ok() || !buffer_at(req, name_off, name_len, q.name) || name_len % 2) return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

// Reads the names in the directory that match `pattern`, "." and ".." first.
NtStatus load_cursor(const Request& req, state::Open& open, const std::string& pattern) {
  state::DirCursor& cur = open.dir;
  cur.entries.clear();
  cur.next = 0;
  cur.loaded = false;
  cur.pattern = pattern;
  bool cs = req.tree->share.case_sensitive;
  bool veto = vetoes_anything(req.tree->share);

  // A fresh descriptor: its own offset, and works when the open holds O_PATH.
  int fd = openat(open.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return nt_status_from_errno(errno);
  DIR* d = fdopendir(fd);
  if (!d) {
    int err = errno;
    close(fd);
    return nt_status_from_errno(err);
  }
  for (const char* dot : {".", ".."})
    if (vfs::wildcard_match(pattern, dot, cs)) cur.entries.push_back(vfs::DirEntry{dot, {}, 0});
  errno = 0;
  while (struct dirent* de = readdir(d)) {
    std::string_view name(de->d_name);
    if (name == "." || name == "..") continue;
    if (veto && is_vetoed_name(req.tree->share, name)) continue;  // vetoed names are invisible
    if (vfs::wildcard_match(pattern, name, cs)) cur.entries.push_back(vfs::DirEntry{std::string(name), {}, 0});
    errno = 0;
  }
  int err = errno;
  closedir(d);
  if (err) return nt_status_from_errno(err);
  cur.loaded = true;
  return NtStatus::Success;
}

// A symlink whose target, resolved beneath the share root, is a directory
// is listed as a directory symlink (DIRECTORY and REPARSE_POINT, as
// Windows lists mklink /D), so that a Windows client treats it as one.
bool link_leads_to_directory(const Request& req, const state::Open& open, const std::string& name) {
  const std::string path = open.path.empty() ? name : open.path + "/" + name;
  const int fd = vfs::open_beneath(open_root_fd(*req.tree, open), path.c_str(), O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// Stats a cursor entry; false when it vanished.
bool stat_entry(const Request& req, const state::Open& open, vfs::DirEntry& e) {
  Result<vfs::FileStat> st = Unexpected(NtStatus::ObjectNameNotFound);
  vfs::FileMeta meta;
  const bool eas = req.tree->eas;
  if (e.name == ".") {
    st = vfs::stat_fd(open.fd.get());
    meta = vfs::read_file_meta(open.fd.get());
    if (eas) e.ea_size = vfs::ea_list_size(open.fd.get());
  } else if (e.name == "..") {
    if (open.path.empty()) {
      st = vfs::stat_fd(open_root_fd(*req.tree, open));  // the share root is its own parent
    } else {
      std::string_view parent, leaf;
      vfs::split_parent(open.path, parent, leaf);
      int pfd = vfs::open_beneath(open_root_fd(*req.tree, open), parent.empty() ? "." : std::string(parent).c_str(),
                                  O_PATH | O_DIRECTORY, 0);
      if (pfd >= 0) {
        st = vfs::stat_fd(pfd);
        meta = vfs::read_file_meta(pfd);
        if (eas) e.ea_size = vfs::ea_list_size(pfd);
        close(pfd);
      }
    }
  } else {
    st = vfs::stat_at(open.fd.get(), e.name.c_str());
    if (st && eas) {
      // One llistxattr says whether there is metadata or EAs to read: as
      // cheap as the lgetxattr of the metadata alone, when there is neither.
      const std::string names = vfs::xattr_names_at(open.fd.get(), e.name);
      if (vfs::xattr_io::has_name(names, vfs::kFileMetaXattr)) meta = vfs::read_file_meta_at(open.fd.get(), e.name);
      e.ea_size = vfs::ea_list_size_at(open.fd.get(), e.name, names);
    } else if (st) {
      meta = vfs::read_file_meta_at(open.fd.get(), e.name);
    }
  }
  if (!st) return false;
  e.st = *st;
  e.st.attributes = reported_attributes_at(req.tree->share, e.st, open.fd.get(), e.name);
  vfs::apply_file_meta(meta, e.st);
  if (S_ISLNK(e.st.mode) && link_leads_to_directory(req, open, e.name)) e.st.attributes |= vfs::FILE_ATTRIBUTE_DIRECTORY;
  return true;
}

// Appends `e` with only as much of its name as fits in `max_size`
// (MS-FSA 2.1.5.6.3: the first entry is returned truncated with
// STATUS_BUFFER_OVERFLOW when its name does not fit).
void append_truncated(FileInfoClass cls, const vfs::DirEntry& e, size_t max_size, Bytes& out) {
  Bytes full;
  size_t off = 0;
  vfs::encode_dir_entry(cls, e, 0, SIZE_MAX, full, off);
  size_t keep = std::min(full.size(), max_size);
  size_t fixed = fixed_entry_size(cls);
  size_t name_bytes = keep > fixed ? (keep - fixed) & ~size_t(1) : 0;
  keep = fixed + name_bytes;
  store_le32(full.data() + name_length_field(cls), uint32_t(name_bytes));
  out.insert(out.end(), full.begin(), full.begin() + ptrdiff_t(keep));
}

}  // namespace

NtStatus handle_query_directory(Request& req, ByteWriter& w) {
  QueryDirectoryRequest q;
  NtStatus st = parse(req, q);
  if (st != NtStatus::Success) return st;
  state::Open* open = req.open;
  if (!open->is_directory) return NtStatus::InvalidParameter;
  if (q.output_length > negotiated_sizes(req.conn, req.server).max_trans) return NtStatus::InvalidParameter;
  size_t fixed = fixed_entry_size(q.cls);
  if (fixed == 0) return NtStatus::InvalidInfoClass;
  if (!(open->granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;  // FILE_LIST_DIRECTORY
  if (q.output_length < fixed) return NtStatus::InfoLengthMismatch;

  std::string pattern;
  if (!vfs::utf16le_to_utf8(q.name, pattern)) return NtStatus::InvalidParameter;
  if (pattern.empty()) pattern.assign(1, '*');  // not = "*": g++ 12 -Wrestrict false positive

  state::DirCursor& cur = open->dir;
  bool first_query = !cur.loaded || (q.flags & (SMB2_RESTART_SCANS | SMB2_REOPEN)) || pattern != cur.pattern;
  if (first_query && (st = load_cursor(req, *open, pattern)) != NtStatus::Success) return st;

  OutputBufferResponse resp(w);
  Bytes& out = w.buffer();
  const size_t base = resp.data_start();
  size_t prev = SIZE_MAX;
  size_t count = 0;
  bool overflow = false;
  while (cur.next < cur.entries.size()) {
    vfs::DirEntry& e = cur.entries[cur.next];
    if (!stat_entry(req, *open, e)) {
      ++cur.next;
      continue;
    }
    size_t at = 0;
    if (!vfs::encode_dir_entry(q.cls, e, base, q.output_length, out, at)) {
      if (count == 0) {
        // Not even the first entry fits: a truncated name and BUFFER_OVERFLOW.
        // The cursor stays so a retry with a larger buffer returns the entry.
        append_truncated(q.cls, e, q.output_length, out);
        overflow = true;
        count = 1;
      }
      break;
    }
    if ((req.conn.aapl_flags & fruit::kAaplReaddirAttr) && q.cls == FileInfoClass::IdBothDirectory &&
        fruit::fruit_share(req))  // AAPL is the connection's; Mac metadata only where fruit is on
      fruit::fill_readdir_attr(req, open->fd.get(), e, out.data() + at);
    if (prev != SIZE_MAX) store_le32(out.data() + prev, uint32_t(at - prev));
    prev = at;
    ++count;
    ++cur.next;
    if (q.flags & SMB2_RETURN_SINGLE_ENTRY) break;
  }
  if (count == 0) {
    resp.discard();
    return first_query ? NtStatus::NoSuchFile : NtStatus::NoMoreFiles;
  }
  resp.finish();
  return overflow ? NtStatus::BufferOverflow : NtStatus::Success;
}

}  // namespace ringsmb::smb2
