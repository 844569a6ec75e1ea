// SMB2 CREATE (MS-SMB2 2.2.13, 2.2.14, 3.3.5.9): open or create a file or
// directory beneath the share root, with share modes, dispositions,
// delete-on-close, and the MxAc / QFid create contexts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "common/log.hpp"
#include "smb2/access.hpp"
#include "smb2/access_check.hpp"
#include "smb2/async_engine.hpp"
#include "smb2/async_write.hpp"
#include "smb2/create_contexts.hpp"
#include "smb2/delayed_write_time.hpp"
#include "smb2/directory_lease.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/durable.hpp"
#include "smb2/lease.hpp"
#include "smb2/pipe_io.hpp"
#include "smb2/security_info.hpp"
#include "smb2/share_options.hpp"
#include "smb2/stream_io.hpp"
#include "vfs/allocation.hpp"
#include "vfs/dos_xattr.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint32_t {
  FILE_SUPERSEDE = 0, FILE_OPEN = 1, FILE_CREATE = 2, FILE_OPEN_IF = 3, FILE_OVERWRITE = 4, FILE_OVERWRITE_IF = 5,
};
enum : uint32_t {
  FILE_DIRECTORY_FILE = 0x1,
  FILE_NON_DIRECTORY_FILE = 0x40,
  FILE_DELETE_ON_CLOSE = 0x1000,
  FILE_OPEN_BY_FILE_ID = 0x2000,
  FILE_OPEN_REPARSE_POINT = 0x00200000,
  FILE_WRITE_THROUGH = 0x2,
  kReservedCreateOptions = 0xFF000000,
};
enum : uint32_t { FILE_SUPERSEDED = 0, FILE_OPENED = 1, FILE_CREATED = 2, FILE_OVERWRITTEN = 3 };

struct CreateRequest {
  uint8_t oplock_level = 0;
  uint32_t impersonation = 0;
  uint32_t desired_access = 0;
  uint32_t file_attributes = 0;
  uint32_t share_access = 0;
  uint32_t disposition = 0;
  uint32_t options = 0;
  ByteSpan name;
  ByteSpan contexts;
  bool data_stream = false;  // the name asked for the data stream explicitly ("dir::$DATA")
};

// The fields and buffers of the request, before any is judged: a durable
// reconnect ignores all but the name and the contexts (3.3.5.9.7).
NtStatus read_request(const Request& req, CreateRequest& c) {
  ByteReader r(req.body);
  r.skip(2);
  r.u8();  // SecurityFlags
  c.oplock_level = r.u8();
  c.impersonation = r.u32();
  r.skip(16);  // SmbCreateFlags, Reserved
  c.desired_access = r.u32();
  c.file_attributes = r.u32();
  c.share_access = r.u32();
  c.disposition = r.u32();
  c.options = r.u32();
  uint16_t name_off = r.u16(), name_len = r.u16();
  uint32_t ctx_off = r.u32(), ctx_len = r.u32();
  if (!r.ok() || !buffer_at(req, name_off, name_len, c.name) || !buffer_at(req, ctx_off, ctx_len, c.contexts))
    return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

NtStatus validate(const CreateRequest& c) {
  if (c.impersonation > 3) return NtStatus::BadImpersonationLevel;
  if (c.disposition > FILE_OVERWRITE_IF || (c.options & kReservedCreateOptions) ||
      (c.options & FILE_DIRECTORY_FILE && c.options & FILE_NON_DIRECTORY_FILE) || (c.share_access & ~7u) ||
      (c.file_attributes & ~0x7FFFu))
    return NtStatus::InvalidParameter;
  if (c.name.size() % 2) return NtStatus::InvalidParameter;
  // MS-SMB2 2.2.13: the name is relative to the share and MUST NOT begin
  // with a separator; Windows fails such a request (smb2.create.leading-slash).
  if (c.name.size() >= 2 && c.name[0] == '\\' && c.name[1] == 0) return NtStatus::InvalidParameter;
  if (c.desired_access & ACCESS_SYSTEM_SECURITY) return NtStatus::PrivilegeNotHeld;
  if ((c.options & FILE_DELETE_ON_CLOSE) && !(map_generic(c.desired_access) & (DELETE | MAXIMUM_ALLOWED)))
    return NtStatus::InvalidParameter;
  if (c.options & FILE_OPEN_BY_FILE_ID) return NtStatus::NotSupported;
  return NtStatus::Success;
}

int open_flags_for(uint32_t access, bool is_dir) {
  if (is_dir) return O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  bool rd = access & (FILE_READ_DATA | FILE_EXECUTE);
  bool wr = access & (FILE_WRITE_DATA | FILE_APPEND_DATA);
  int f = wr ? (rd ? O_RDWR : O_WRONLY) : O_RDONLY;
  return f | O_CLOEXEC | O_NOFOLLOW;
}

// Where the file lives: its parent directory fd and leaf name.
struct Target {
  std::string path;  // relative, resolved for case
  std::string_view parent, leaf;
  state::UniqueFd parent_fd;
  ParentSecurity parent_security;  // for a new name: the parent's stored descriptor
};

int open_parent(int root, std::string_view parent) {
  return vfs::open_beneath(root, parent.empty() ? "." : std::string(parent).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC,
                           0);
}

// Finds the parent directory of the target. The common case costs one open:
// the parent exists under the exact name. Only a miss on the parent walks
// the path component by component through the folded-name index; the
// leaf's case is settled in open_or_create, which stats it anyway.
NtStatus locate(Request& req, const vfs::SmbPath& p, Target& t) {
  int root = req.tree->root.get();
  bool fold = !req.tree->share.case_sensitive;
  t.path = p.path;
  vfs::split_parent(t.path, t.parent, t.leaf);
  int fd = open_parent(root, t.parent);
  if (fd < 0 && fold && (-fd == ENOENT || -fd == ENOTDIR)) {
    t.path = vfs::resolve_case_insensitive(req.server.names, root, p.path);
    vfs::split_parent(t.path, t.parent, t.leaf);
    fd = open_parent(root, t.parent);
  }
  if (fd < 0) return (-fd == ENOENT || -fd == ENOTDIR) ? NtStatus::ObjectPathNotFound : vfs::open_beneath_status(fd);
  t.parent_fd.reset(fd);
  return NtStatus::Success;
}

// Stats the leaf; when it is missing under the client's spelling on a
// case-insensitive share, looks it up in the folded-name index, then among
// the generated 8.3 names (vfs/short_names.hpp), and switches the target to
// the on-disk name.
Result<vfs::FileStat> stat_leaf(Request& req, Target& t) {
  if (t.path.empty()) return vfs::stat_fd(t.parent_fd.get());
  auto st = vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());
  if (st || st.error() != NtStatus::ObjectNameNotFound || req.tree->share.case_sensitive) return st;
  auto real = req.server.names.find(t.parent_fd.get(), t.leaf);
  if (!real) real = vfs::find_by_short_name(t.parent_fd.get(), t.leaf);  // only for the generated form
  if (!real || *real == t.leaf) return st;
  t.path = std::string(t.parent) + (t.parent.empty() ? "" : "/") + *real;
  vfs::split_parent(t.path, t.parent, t.leaf);
  return vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());
}

struct Opened {
  state::UniqueFd fd;
  vfs::FileStat st;
  uint32_t action = FILE_OPENED;
  bool created = false;
  // Overwrite/supersede: truncated only once the share modes allow this
  // open, so a request that ends in a sharing violation destroys nothing.
  bool truncate = false;
  bool stream_created = false;  // a named stream this request made
  std::string stream_name;      // an existing stream's name as created
  // The attributes a new file was given in the server-private metadata
  // (apply_new_attributes), reported without reading them back.
  std::optional<uint32_t> new_attributes;
};

// MS-FSA 2.1.5.1.2: what an existing file must be for this request.
NtStatus check_existing(const CreateRequest& c, const vfs::FileStat& st) {
  // A directory has no data stream to open.
  if (st.is_directory && (c.options & FILE_NON_DIRECTORY_FILE || c.data_stream)) return NtStatus::FileIsADirectory;
  if (!st.is_directory && (c.options & FILE_DIRECTORY_FILE)) return NtStatus::NotADirectory;
  return NtStatus::Success;
}

// A data file with FILE_ATTRIBUTE_READONLY (MS-FSA 2.1.5.1.2.1 applies to
// it; a directory's READONLY does not refuse writes to it).
bool is_readonly_file(const vfs::FileStat& st) {
  return !st.is_directory && (vfs::dos_attributes(st, {}, false) & vfs::FILE_ATTRIBUTE_READONLY);
}

bool overwrites(const CreateRequest& c) {
  return c.disposition == FILE_OVERWRITE || c.disposition == FILE_OVERWRITE_IF || c.disposition == FILE_SUPERSEDE;
}

NtStatus open_existing(const CreateRequest& c, uint32_t access, Target& t, const vfs::FileStat& st, Opened& o) {
  if (NtStatus s = check_existing(c, st); s != NtStatus::Success) return s;
  bool overwrite = overwrites(c);
  if (overwrite && st.is_directory) return NtStatus::InvalidParameter;
  // MAXIMUM_ALLOWED on a READONLY file gets no write rights (apply_security),
  // so it is not opened for writing: its mode has no write bits.
  constexpr uint32_t kWriteData = FILE_WRITE_DATA | FILE_APPEND_DATA;
  const uint32_t asked = map_generic(c.desired_access);
  if ((asked & MAXIMUM_ALLOWED) && !(asked & kWriteData) && is_readonly_file(st)) access &= ~kWriteData;
  int flags = open_flags_for(access, st.is_directory);
  if (overwrite) {  // the data is replaced: the descriptor must be writable
    bool rd = access & (FILE_READ_DATA | FILE_EXECUTE);
    flags = (flags & ~O_ACCMODE) | (rd ? O_RDWR : O_WRONLY);
  }
  std::string leaf(t.leaf.empty() ? "." : t.leaf);
  int fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), flags, 0);
  bool data_access = access & (FILE_READ_DATA | FILE_EXECUTE | FILE_WRITE_DATA | FILE_APPEND_DATA);
  if (fd == -EACCES && !data_access && !overwrite)  // attributes only: no read permission needed
    fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW, 0);
  // A symlink opened as the reparse point it is (FSCTL_GET_REPARSE_POINT
  // reads it): the link itself, never what it points at.
  if (fd == -ELOOP && S_ISLNK(st.mode) && (c.options & FILE_OPEN_REPARSE_POINT) && !overwrite)
    fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) return vfs::open_beneath_status(fd);
  o.fd.reset(fd);
  o.truncate = overwrite;
  o.action = c.disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED : overwrite ? FILE_OVERWRITTEN : FILE_OPENED;
  return NtStatus::Success;
}

// The common open in one openat2 from the share root and one statx: the
// name exists exactly as given and is opened, not created or overwritten.
// Returns false when the slow path must decide: a miss (maybe another case,
// maybe a create), a directory opened for writing, a symlink, a permission
// error that an attribute-only open may get around.
bool open_exact(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p, Target& t,
                Opened& o, NtStatus& status) {
  if ((c.disposition != FILE_OPEN && c.disposition != FILE_OPEN_IF) || p.path.empty()) return false;
  int fd = vfs::open_beneath(req.tree->root.get(), p.path.c_str(),
                             open_flags_for(access, c.options & FILE_DIRECTORY_FILE), 0);
  if (fd < 0) return false;
  o.fd.reset(fd);
  auto st = vfs::stat_fd(fd);
  if (!st) {
    status = st.error();
    return true;
  }
  o.st = *st;
  o.action = FILE_OPENED;
  t.path = p.path;
  vfs::split_parent(t.path, t.parent, t.leaf);
  status = check_existing(c, o.st);
  return true;
}

// Makes the directory or file; returns the new fd or -errno. The name index
// is told what happened to the parent either way.
int make_entry(Request& req, const CreateRequest& c, uint32_t access, const Target& t, const std::string& leaf) {
  auto change = req.server.names.begin_change(t.parent_fd.get());
  if (c.options & FILE_DIRECTORY_FILE) {
    if (mkdirat(t.parent_fd.get(), leaf.c_str(), new_dir_mode(req.tree->share)) != 0) {
      const int err = errno;
      change.unchanged();
      return -err;
    }
    change.added(leaf);
    return vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  }
  const int fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(),
                                   open_flags_for(access, false) | O_CREAT | O_EXCL, new_file_mode(req.tree->share));
  if (fd >= 0)
    change.added(leaf);
  else
    change.unchanged();  // O_EXCL: a failed create made nothing
  return fd;
}

NtStatus create_new(Request& req, const CreateRequest& c, uint32_t access, Target& t, Opened& o) {
  std::string leaf(t.leaf);
  const int fd = make_entry(req, c, access, t, leaf);
  if (fd < 0) return vfs::open_beneath_status(fd);
  restore_masked_mode(fd, (c.options & FILE_DIRECTORY_FILE) ? new_dir_mode(req.tree->share)
                                                            : new_file_mode(req.tree->share));
  o.fd.reset(fd);
  o.action = FILE_CREATED;
  o.created = true;
  return NtStatus::Success;
}

void write_response(ByteWriter& w, const state::Open& open, const Opened& o, uint32_t attrs, ByteSpan contexts,
                    uint8_t oplock_level) {
  size_t header_start = w.size() - wire::kHeaderSize;
  w.u16(89);
  w.u8(oplock_level);
  w.u8(0);  // Flags
  w.u32(o.action);
  w.u64(o.st.creation_time);
  w.u64(o.st.last_access_time);
  w.u64(o.st.last_write_time);
  w.u64(o.st.change_time);
  w.u64(o.st.allocation_size);
  w.u64(o.st.end_of_file);
  w.u32(attrs);
  w.u32(0);
  w.u64(open.persistent_id);
  w.u64(open.volatile_id);
  size_t ctx_pos = w.size();
  w.u32(0);
  w.u32(0);
  if (!contexts.empty()) {
    w.align(8, header_start);
    w.patch_u32(ctx_pos, uint32_t(w.size() - header_start));
    w.patch_u32(ctx_pos + 4, uint32_t(contexts.size()));
    w.bytes(contexts);
  } else {
    w.u8(0);  // the one-byte Buffer
  }
}

NtStatus open_or_create(Request& req, const CreateRequest& c, uint32_t access, Target& t, Opened& o) {
  auto st = stat_leaf(req, t);
  if (st) {
    if (c.disposition == FILE_CREATE) return NtStatus::ObjectNameCollision;
    if (c.disposition != FILE_OPEN && c.disposition != FILE_OPEN_IF)
      if (NtStatus s = check_tree_change(*req.tree, Change::Overwrite); s != NtStatus::Success) return s;
    return open_existing(c, access, t, *st, o);
  }
  if (st.error() != NtStatus::ObjectNameNotFound) return st.error();
  if (c.disposition == FILE_OPEN || c.disposition == FILE_OVERWRITE) return NtStatus::ObjectNameNotFound;
  if (NtStatus s = check_tree_change(*req.tree, Change::CreateName); s != NtStatus::Success) return s;
  // MS-FSA 2.1.5.1.1: a new file cannot be both read-only and deleted on close.
  if ((c.options & FILE_DELETE_ON_CLOSE) && (c.file_attributes & vfs::FILE_ATTRIBUTE_READONLY))
    return NtStatus::CannotDelete;
  if (NtStatus s = check_create_in_parent(req, t.parent_fd.get(), c.options & FILE_DIRECTORY_FILE, t.parent_security);
      s != NtStatus::Success)
    return s;
  NtStatus s = create_new(req, c, access, t, o);
  if (s == NtStatus::ObjectNameCollision && c.disposition != FILE_CREATE) {
    auto again = vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());  // lost a race: open it
    if (again) return open_existing(c, access, t, *again, o);
  }
  return s;
}

// Empties an overwritten file once its open is granted; its named streams
// go too (MS-FSA 2.1.5.1.2.2; smb2.streams.create-disposition).
Result<void> truncate_opened(Opened& o, bool streams) {
  if (ftruncate(o.fd.get(), 0) != 0) return std::unexpected(nt_status_from_errno(errno));
  if (streams)
    if (NtStatus s = vfs::remove_all_streams(o.fd.get()); s != NtStatus::Success) return std::unexpected(s);
  auto st = vfs::stat_fd(o.fd.get());
  if (!st) return std::unexpected(st.error());
  o.st = *st;
  return {};
}

// Empties an overwritten stream once its open is granted.
Result<void> truncate_stream(Opened& o, const std::string& key) {
  if (NtStatus s = vfs::set_stream_size(o.fd.get(), key, 0); s != NtStatus::Success) return std::unexpected(s);
  o.st.end_of_file = o.st.allocation_size = 0;
  return {};
}

// Takes back what a refused CREATE made: the file (create_new) or the stream.
void undo_create(Request& req, const Target& t, const Opened& o, const std::string& stream_key) {
  if (o.created)
    vfs::unlink_noted(req.server.names, t.parent_fd.get(), std::string(t.leaf), o.st.is_directory);
  else if (o.stream_created)
    vfs::remove_stream(o.fd.get(), stream_key);
}

// A stream open's registration on its file (state::kStreamHolder), dropped
// again unless the open is kept.
class StreamHold {
 public:
  StreamHold(state::FileTable& files, const void* owner) : files_(files), owner_(owner) {}
  ~StreamHold() {
    if (node_) files_.close(node_, owner_);
  }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  NtStatus take(uint64_t dev, uint64_t ino, uint32_t share_access) {
    auto node = files_.open(dev, ino, owner_, state::kStreamHolder, share_access);
    if (!node) return node.error();
    node_ = std::move(*node);
    return NtStatus::Success;
  }
  std::shared_ptr<state::FileNode> keep() { return std::move(node_); }

 private:
  state::FileTable& files_;
  const void* owner_;
  std::shared_ptr<state::FileNode> node_;
};

// Opens or creates the target: the one-open fast path when it applies,
// else parent directory, case resolution and disposition.
NtStatus open_target(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p, Target& t,
                     Opened& o) {
  NtStatus st;
  if (open_exact(req, c, access, p, t, o, st)) return st;
  if ((st = locate(req, p, t)) != NtStatus::Success) return st;
  if ((st = open_or_create(req, c, access, t, o)) != NtStatus::Success) return st;
  auto stat = vfs::stat_fd(o.fd.get());
  if (!stat) return stat.error();
  o.st = *stat;
  return NtStatus::Success;
}

// A named stream: the file is opened (or made, when the disposition may
// create) as for its data, with the user's identity, so the kernel checks
// the user's rights on the file; then the disposition applies to the
// stream (smb2/stream_io.cpp). `o.st` then describes the stream.
NtStatus open_stream_target(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p,
                            const std::string& key, Target& t, Opened& o) {
  CreateRequest base = c;
  bool may_create = c.disposition != FILE_OPEN && c.disposition != FILE_OVERWRITE;
  base.disposition = may_create ? FILE_OPEN_IF : FILE_OPEN;
  base.options &= ~(FILE_DELETE_ON_CLOSE | FILE_NON_DIRECTORY_FILE);
  base.data_stream = false;
  NtStatus st = open_target(req, base, access, p, t, o);
  if (st != NtStatus::Success) return st;
  if (!o.st.is_directory && !S_ISREG(o.st.mode)) return NtStatus::ObjectNameInvalid;
  // A directory's fd is read-only whatever the access: ask the kernel.
  bool changes = access & (FILE_WRITE_DATA | FILE_APPEND_DATA);
  bool deletes = c.options & FILE_DELETE_ON_CLOSE;
  if (((o.st.is_directory && changes) || deletes) && !o.created)
    if ((st = check_stream_writable(o.fd.get())) != NtStatus::Success) return st;
  StreamCreate sc;
  if ((st = open_stream(req, c.disposition, o.fd.get(), key, p.stream, sc)) != NtStatus::Success) return st;
  o.truncate = sc.truncate;
  o.stream_created = sc.created;
  o.stream_name = std::move(sc.name);
  o.action = sc.action;
  o.st.end_of_file = sc.truncate ? 0 : sc.size;
  o.st.allocation_size = vfs::stream_allocation(o.st.end_of_file);
  return NtStatus::Success;
}

// The delete happens at the last close, where a refusal reaches no one:
// ask now what SET_INFO FileDispositionInformation would (MS-FSA 2.1.5.1.2:
// a read-only file cannot be deleted; the file system's unlink rules). A
// file this request made is ours to remove.
NtStatus check_delete_on_close(Request& req, const CreateRequest& c, const Target& t, const Opened& o) {
  if (!(c.options & FILE_DELETE_ON_CLOSE) || o.created || t.path.empty()) return NtStatus::Success;
  if (NtStatus st = check_unlink_allowed(*req.tree, t.path); st != NtStatus::Success) return st;
  if (vfs::dos_attributes(o.st, {}, false) & vfs::FILE_ATTRIBUTE_READONLY) return NtStatus::CannotDelete;
  return NtStatus::Success;
}

// The NT descriptor's part (smb2/security_info.hpp): an existing file's
// stored descriptor narrows the access, and so does its READONLY
// attribute (smb2/access_check.hpp); a new one inherits its parent's
// descriptor (and is removed again when that fails).
NtStatus apply_security(Request& req, const CreateRequest& c, Target& t, Opened& o, uint32_t& access) {
  if (!o.created) {
    if (is_readonly_file(o.st)) {
      auto kept = apply_readonly_attribute(access, c.desired_access, overwrites(c));
      if (!kept) return kept.error();
      access = *kept;
    }
    return check_open_descriptor(req, o.fd.get(), o.st, t.parent_fd ? t.parent_fd.get() : -1, t.path,
                                 c.desired_access, c.options & FILE_DELETE_ON_CLOSE, overwrites(c), access);
  }
  NtStatus st = inherit_on_create(req, o.fd.get(), o.st, t.parent_security, c.contexts);
  if (st != NtStatus::Success)
    vfs::unlink_noted(req.server.names, t.parent_fd.get(), std::string(t.leaf), o.st.is_directory);
  return st;
}

// MS-FSA 2.1.5.1.2.1: a new file takes the attributes the client asked
// for, and ARCHIVE. READONLY goes to the mode (the creating open keeps the
// write access it was granted: its descriptor is open already); HIDDEN,
// SYSTEM and ARCHIVE to user.DOSATTRIB under "store dos attributes", else
// to the server-private metadata (vfs/file_meta.hpp), only where the mode
// does not imply them: a plain new file costs no xattr write. A stream's
// CREATE that made its file sets only the stored attributes.
void apply_new_attributes(Request& req, const CreateRequest& c, Opened& o, bool stream) {
  const ipc::ShareInfo& share = req.tree->share;
  if (share.store_dos_attributes) store_new_file_attributes(*req.tree, o.fd.get(), o.st, c.file_attributes);
  if (stream) return;
  if ((c.file_attributes & vfs::FILE_ATTRIBUTE_READONLY) && S_ISREG(o.st.mode) && (o.st.mode & 0222)) {
    const mode_t mode = mode_t(o.st.mode & 07777 & ~0222u);
    if (fchmod(o.fd.get(), mode) == 0) o.st.mode = (o.st.mode & ~07777u) | mode;
  }
  if (share.store_dos_attributes) return;
  const uint32_t want = c.file_attributes | (o.st.is_directory ? 0u : uint32_t(vfs::FILE_ATTRIBUTE_ARCHIVE));
  auto keep = vfs::dos_attributes_to_keep(want, vfs::dos_attributes(o.st, {}, false));
  if (!keep) return;
  vfs::FileMeta meta;
  meta.dos_attributes = keep;
  if (vfs::write_file_meta(o.fd.get(), meta) == 0) o.new_attributes = keep;
}

// SMB2_CREATE_ALLOCATION_SIZE (MS-SMB2 3.3.5.9.3): a file made or
// overwritten by this request gets the space reserved; DISK_FULL when it
// cannot be. Only an open with contexts looks.
NtStatus apply_allocation_size(const CreateRequest& c, Opened& o) {
  if (c.contexts.empty() || o.st.is_directory) return NtStatus::Success;
  uint64_t size = 0;
  if (NtStatus st = find_allocation_size(c.contexts, size); st != NtStatus::Success || size == 0) return st;
  if (size > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  if (NtStatus st = vfs::reserve_allocation(o.fd.get(), size); st != NtStatus::Success) return st;
  // The reservation can move the times too (ext4 sets mtime and ctime):
  // the response says what QUERY_INFO will.
  auto stat = vfs::stat_fd(o.fd.get());
  if (!stat) return stat.error();
  o.st = *stat;
  return NtStatus::Success;
}

// Drops an open registered in the file table that will not be used.
void release(Request& req, const std::shared_ptr<state::FileNode>& node, const state::Open* owner) {
  auto closed = req.server.files.close_cached(node, owner);
  post_wakeups(req.server, closed.wake);
}

// What the open asks of oplocks and leases (MS-SMB2 3.3.5.9, 3.3.5.9.8,
// 3.3.5.9.11). Shares with oplocks or leases off, directories and SMB 2.0.2
// leases get none; the request still breaks what it contends.
void describe_caching(Request& req, const CreateRequest& c, const Opened& o, const LeaseRequest& lease,
                      const state::Open& open, state::CacheRequest& cache) {
  const auto& share = req.tree->share;
  bool lease_ok = share.leases && req.conn.dialect >= 0x0210 && req.conn.dialect != 0x02FF;
  cache.directory = o.st.is_directory;
  cache.directory_leases = req.conn.is_smb3() && lease.version == 2;  // SMB2_GLOBAL_CAP_DIRECTORY_LEASING
  if (c.oplock_level == state::kOplockLease) {
    if (lease.present && lease_ok) {
      cache.oplock_level = state::kOplockLease;
      cache.lease = req.server.leases.find_or_create(req.conn.client_guid, lease.key);
      cache.lease_state = lease.state;
      cache.lease_version = lease.version;
      cache.lease_epoch = lease.epoch;
      cache.parent_key = lease.parent_key;
      cache.has_parent = lease.has_parent;
    }
  } else if (share.oplocks && (c.oplock_level == state::kOplockLevelII || c.oplock_level == state::kOplockExclusive ||
                               c.oplock_level == state::kOplockBatch)) {
    cache.oplock_level = c.oplock_level;
  }
  cache.overwrite = overwrites(c);
  cache.delete_on_close = c.options & FILE_DELETE_ON_CLOSE;
  // Past the async engine's limits the open does not wait for the breaks
  // it starts (as in the middle of nothing that could wait).
  cache.can_wait = req.async_id || has_room_to_wait(req);
  cache.waited = req.async_id != 0;
  cache.waiter = {req.conn.address, req.async_id ? req.async_id : next_async_id(req.conn)};
  cache.holder = req.conn.address;
  cache.session_id = req.session->session_id;
  cache.persistent_id = open.persistent_id;
  cache.volatile_id = open.volatile_id;
  cache.now_ms = monotonic_ms();
  cache.break_timeout_ms = req.server.lease_break_timeout_ms;
}

// A waiting CREATE withdrawn (CANCEL, TREE_DISCONNECT, LOGOFF, the
// connection's end) stops waiting for the breaks; the breaks go on.
NtStatus withdraw_create(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason) {
  server.files.drop_waiter(w.node, {conn.address, w.async_id});
  return NtStatus::Cancelled;
}

// 3.3.4.2: answered PENDING; the chain from this CREATE runs again when
// the breaks it waits for end (rerun_waiting_chain).
NtStatus wait_for_breaks(Request& req, std::shared_ptr<state::FileNode> node, const DurableRequest& durable) {
  uint64_t expected = req.async_id ? req.async_id : next_async_id(req.conn);
  WaitingRequest w;
  w.kind = WaitKind::RunAgain;
  w.node = node;
  w.has_create_guid = durable.v2_request;  // a replay of this CREATE meanwhile is refused
  w.create_guid = durable.create_guid;
  w.withdraw = withdraw_create;
  NtStatus st = start_waiting(req, std::move(w));
  if (st != NtStatus::Pending) req.server.files.drop_waiter(node, {req.conn.address, expected});
  return st;
}

// One more open file must fit the connection's, the user's and the
// process's limits (docs/security.md). A user may take at most half of
// the descriptors the budget has for clients, whatever the setting.
NtStatus open_files_fit(const Request& req) {
  const config::GlobalConfig& g = req.server.config.global;
  if (req.conn.opens.size() >= g.max_open_files) return NtStatus::TooManyOpenedFiles;
  const state::ResourceBudget& budget = req.server.budget;
  if (const auto* user = req.session->user_open_count) {
    uint32_t cap = std::min(g.max_open_files_per_user, budget.usable_descriptors() / 2);
    if (user->load(std::memory_order_relaxed) >= cap) return NtStatus::TooManyOpenedFiles;
  }
  if (!budget.open_file_fits(req.server.connections.load(std::memory_order_relaxed)))
    return NtStatus::InsufficientResources;
  return NtStatus::Success;
}

// A durable reconnect or a replayed CREATE answers with an open that
// exists already, as it stands (MS-SMB2 3.3.5.9.7, 3.3.5.9.10, 3.3.5.9.12).
NtStatus answer_open_again(Request& req, const CreateRequest& c, state::Open& open, const LeaseRequest& lease_req,
                           uint8_t oplock_level, uint32_t action, bool durable_context, ByteWriter& w) {
  auto stat = vfs::stat_fd(open.fd.get());
  if (!stat) return stat.error();
  Opened o;
  o.st = *stat;
  o.action = action;
  state::CacheGrant g = req.server.files.current_grant(open.node, open.lease);
  LeaseAnswer answer{lease_req, g.lease_state, g.lease_breaking, g.epoch};
  answer.request.version = g.version;
  answer.request.parent_key = g.parent_key;
  answer.request.has_parent = g.has_parent;
  bool lease_answered = open.oplock_level == state::kOplockLease && lease_req.present;
  Bytes& contexts = req.conn.create_contexts_scratch;
  contexts.clear();
  NtStatus st = answer_create_contexts(req, c.contexts, open, o.st, lease_answered ? &answer : nullptr, contexts);
  if (st != NtStatus::Success) return st;
  if (durable_context) answer_durable(open, contexts);
  std::string_view parent, leaf;
  vfs::split_parent(open.path, parent, leaf);
  write_response(w, open, o, reported_attributes(req.tree->share, o.st, leaf, open.fd.get()), contexts,
                 oplock_level);
  req.compound.file_id = {open.persistent_id, open.volatile_id};
  return NtStatus::Success;
}

// DHnC / DH2C: no path validation, no open; the kept open comes back.
NtStatus reconnect(Request& req, const CreateRequest& c, const DurableRequest& d, ByteWriter& w) {
  LeaseRequest lease;
  if (NtStatus st = find_lease_request(req, c.contexts, lease); st != NtStatus::Success) return st;
  auto open = reconnect_durable(req, c.name, lease, d);
  if (!open && open.error() == NtStatus::ObjectNameNotFound) return wait_for_reconnect(req, d);
  if (!open) return open.error();
  return answer_open_again(req, c, **open, lease, (*open)->oplock_level, FILE_OPENED, false, w);
}

// The durable contexts, read only when there are contexts (nothing for the
// common open); a reconnect is answered here, before the request's other
// fields are judged (ANSWERED).
NtStatus read_durable(Request& req, const CreateRequest& c, DurableRequest& d, ByteWriter& w, bool& answered) {
  answered = false;
  if (c.contexts.empty() || req.tree->share.is_ipc) return NtStatus::Success;
  if (NtStatus st = find_durable_request(req, c.contexts, d); st != NtStatus::Success || !d.reconnect()) return st;
  answered = true;
  return reconnect(req, c, d, w);
}

// DH2Q: a replay of a CREATE whose open lives gets that open again.
NtStatus check_replay(Request& req, const CreateRequest& c, const DurableRequest& d, ByteWriter& w, bool& answered) {
  answered = false;
  state::Open* replayed = nullptr;
  if (NtStatus st = find_replayed_open(req, d, replayed); st != NtStatus::Success || !replayed) return st;
  LeaseRequest lease;
  if (NtStatus st = find_lease_request(req, c.contexts, lease); st != NtStatus::Success) return st;
  // The replay may not change the caching of the open (smb2.replay.*):
  // a lease where it has an oplock, or another lease key, is refused; an
  // oplock open answers the level the replay asks for (and durability
  // only with batch), as Windows does, and keeps its own.
  bool leased = replayed->oplock_level == state::kOplockLease;
  if (!leased && c.oplock_level == state::kOplockLease) return NtStatus::AccessDenied;
  if (leased && lease.present && replayed->lease && lease.key != replayed->lease->key) return NtStatus::AccessDenied;
  uint8_t level = leased ? uint8_t(state::kOplockLease) : c.oplock_level;
  answered = true;
  // The replay answers what the CREATE did (FILE_CREATED stays so).
  return answer_open_again(req, c, *replayed, lease, level, replayed->create_action,
                           leased || level == state::kOplockBatch, w);
}

// The overwrite of a large file off the worker (issue 14): its ftruncate
// frees the blocks, ~87 ms for 100 MiB on ext4 with discard. A CREATE alone
// in its frame (not run again after a break, without an AllocationSize)
// that overwrites a file of kLargeFileBytes or more does all the rest on
// the worker: the open is granted and registered (its share modes hold
// from now on), the response is built with EndOfFile 0. Then it goes
// async: the ftruncate runs on the connection's write lane, whose
// completion puts the times the truncation gave into the response, breaks
// the directory's leases and answers (the interim is held back 5 ms, as
// for FLUSH). Until then the connection's later requests are held, as
// behind a large WRITE (smb2/async_write.hpp); other connections see the
// file being emptied, as while any CREATE runs. A break of the oplock or
// lease it was granted (another client's CREATE meanwhile) waits for its
// response (ConnState::held_breaks): the client must know the FileId
// first. (A lease break goes to the client's oldest connection: when that
// is another one, it is not held.)
constexpr int64_t kOverwriteInterimDelayMs = 5;
constexpr size_t kResponseWriteTime = 24, kResponseChangeTime = 32;  // in the CREATE response body (2.2.14)

bool overwrite_goes_async(const Request& req, const CreateRequest& c, const Opened& o) {
  return req.server.blocking && o.st.allocation_size >= state::kLargeFileBytes && !o.st.is_directory &&
         req.hdr.next_command == 0 && !req.compound.in_chain && req.async_id == 0 &&
         !has_create_context(c.contexts, "AlSi") && has_room_to_wait(req);
}

// What the worker does of an overwrite whose ftruncate runs on the pool:
// the named streams go, and the response shows the file empty (its times
// are put in once the truncation is done).
Result<void> prepare_pool_truncate(Opened& o, bool streams) {
  if (streams)
    if (NtStatus s = vfs::remove_all_streams(o.fd.get()); s != NtStatus::Success) return std::unexpected(s);
  o.st.end_of_file = o.st.allocation_size = 0;
  o.st.last_write_time = o.st.change_time = vfs::filetime_now();
  return {};
}

// The times of the emptied file, in the response BODY.
void put_truncated_times(Bytes& body, int fd) {
  if (auto st = vfs::stat_fd(fd)) {
    store_le64(body.data() + kResponseWriteTime, st->last_write_time);
    store_le64(body.data() + kResponseChangeTime, st->change_time);
  }
}

// The worker's side of the overwrite's ftruncate (posted by the pool).
void finish_overwrite(ConnState& conn, ServerContext& server, uint64_t async_id, uint64_t volatile_id,
                      NtStatus status, const Bytes& body) {
  --conn.writes_in_flight;
  --conn.overwrites_in_flight;
  auto it = conn.opens.find(volatile_id);
  if (status != NtStatus::Success) {  // the open is refused after all
    if (it != conn.opens.end()) close_open(conn, server, volatile_id);
    complete(conn, async_id, status);
    if (!conn.overwrites_in_flight) release_held_breaks(conn);
    return;
  }
  if (it != conn.opens.end()) {
    state::Open& open = *it->second;
    write_time_seen(open, load_le64(body.data() + kResponseWriteTime));
    if (state::Session* s = conn.find_session(open.session_id)) {
      auto t = s->trees.find(open.tree_id);
      if (t != s->trees.end() && t->second->root)  // the entry's data replaced: the directory's leases break
        break_parent_directory_leases(server, t->second->root.get(), open.path, conn.client_guid,
                                      parent_lease_key(open));
    }
  }
  complete(conn, async_id, status, body);
  if (!conn.overwrites_in_flight) release_held_breaks(conn);  // after the response
}

// Registers OPEN and starts its file's ftruncate on the pool; BODY is the
// CREATE response body. STATUS_PENDING, or (when it cannot wait after
// all) the truncation done here and the response in W.
NtStatus overwrite_on_pool(Request& req, ByteWriter& w, std::unique_ptr<state::Open> open, Bytes body) {
  ConnState& conn = req.conn;
  ServerContext& server = req.server;
  NtStatus st;
  int fd = start_pool_wait(req, *open, WaitKind::Write, kOverwriteInterimDelayMs, st);
  if (fd < 0) {
    if (ftruncate(open->fd.get(), 0) != 0) {  // the open is refused after all
      NtStatus failed = nt_status_from_errno(errno);
      uint64_t volatile_id = open->volatile_id;
      conn.opens.emplace(volatile_id, std::move(open));
      close_open(conn, server, volatile_id);
      return failed;
    }
    put_truncated_times(body, open->fd.get());
    write_time_seen(*open, load_le64(body.data() + kResponseWriteTime));
    break_parent_directory_leases(server, req.tree->root.get(), open->path, conn.client_guid,
                                  parent_lease_key(*open));
    w.bytes(body);
    conn.opens.emplace(open->volatile_id, std::move(open));
    return NtStatus::Success;
  }
  if (!conn.write_lane) conn.write_lane = std::make_shared<BlockingPool::Lane>();
  uint64_t volatile_id = open->volatile_id;
  conn.opens.emplace(volatile_id, std::move(open));
  server.blocking->submit(conn.write_lane, [&server, to = conn.address, id = req.async_id, volatile_id, fd,
                                            body = std::move(body)]() mutable {
    NtStatus status = ftruncate(fd, 0) == 0 ? NtStatus::Success : nt_status_from_errno(errno);
    if (status == NtStatus::Success) put_truncated_times(body, fd);
    close(fd);
    post_to_conn(server, to, [&server, id, volatile_id, status, body = std::move(body)](ConnState& c, Bytes&) {
      finish_overwrite(c, server, id, volatile_id, status, body);
    });
  });
  ++conn.writes_in_flight;  // answered through this thread's posted tasks: never before this
  ++conn.overwrites_in_flight;
  return NtStatus::Pending;
}

}  // namespace

NtStatus handle_create(Request& req, ByteWriter& w) {
  CreateRequest c;
  NtStatus st = read_request(req, c);
  if (st != NtStatus::Success) return st;
  DurableRequest durable;
  bool answered = false;
  if ((st = read_durable(req, c, durable, w, answered)) != NtStatus::Success || answered) return st;
  if ((st = validate(c)) != NtStatus::Success) return st;
  if (req.tree->share.is_ipc) return create_pipe(req, {c.name, c.desired_access, c.share_access, c.options}, w);
  if (durable.v2_request && ((st = check_replay(req, c, durable, w, answered)) != NtStatus::Success || answered))
    return st;

  // MS-SMB2 3.3.5.9.4: an open of a snapshot (SMB2_CREATE_TIMEWARP_TOKEN)
  // names no snapshot here: ringsmbd keeps none.
  if (!c.contexts.empty() && has_create_context(c.contexts, "TWrp")) return NtStatus::ObjectNameNotFound;
  std::vector<vfs::Ea> create_eas;
  if (!c.contexts.empty() && (st = find_create_eas(*req.tree, c.contexts, create_eas)) != NtStatus::Success)
    return st;
  auto path = vfs::parse_smb_path(c.name);
  if (!path) return path.error();
  // MS-FSA 2.1.5.1: a stream, named or the explicit $DATA one, is never a
  // directory; that check precedes any lookup.
  c.data_stream = path->data_stream_type || !path->stream.empty();
  if (c.data_stream && (c.options & FILE_DIRECTORY_FILE)) return NtStatus::NotADirectory;
  std::string stream_key;
  if (!path->stream.empty()) {
    if (!req.tree->streams) return NtStatus::ObjectNameInvalid;  // "streams = no", or nowhere to keep them
    auto key = vfs::stream_xattr_name(path->stream);
    if (!key) return key.error();
    stream_key = std::move(*key);
  }
  if (vetoes_anything(req.tree->share) && (st = veto_status(req.tree->share, path->path)) != NtStatus::Success)
    return st;
  if (durable.app_instance && (st = close_previous_app_instance(req, durable, path->path)) != NtStatus::Success)
    return st;
  if ((st = open_files_fit(req)) != NtStatus::Success) return st;
  auto granted = grant_create_access(*req.tree, c.desired_access, c.options & FILE_DELETE_ON_CLOSE);
  if (!granted) return granted.error();
  uint32_t access = *granted;

  Target t;
  Opened o;
  if (stream_key.empty()) {
    if ((st = open_target(req, c, access, *path, t, o)) != NtStatus::Success) return st;
    if ((st = apply_security(req, c, t, o, access)) != NtStatus::Success) return st;
    if ((st = check_delete_on_close(req, c, t, o)) != NtStatus::Success) return st;
  } else if ((st = open_stream_target(req, c, access, *path, stream_key, t, o)) != NtStatus::Success ||
             (st = apply_security(req, c, t, o, access)) != NtStatus::Success) {
    undo_create(req, t, o, stream_key);  // a stream is checked against its file's descriptor
    return st;
  }
  if (o.created) apply_new_attributes(req, c, o, !stream_key.empty());

  auto open = std::make_unique<state::Open>();
  open->persistent_id = open->volatile_id = req.server.next_file_id.fetch_add(1);
  LeaseRequest lease_req;
  if ((st = find_lease_request(req, c.contexts, lease_req)) != NtStatus::Success) return st;
  state::CacheRequest cache;
  describe_caching(req, c, o, lease_req, *open, cache);
  uint64_t node_device = o.st.device;
  StreamHold hold(req.server.files, open.get());
  if (!stream_key.empty()) {
    if ((st = hold.take(o.st.device, o.st.file_id, c.share_access)) != NtStatus::Success) {
      undo_create(req, t, o, stream_key);
      return st;
    }
    node_device = stream_node_device(o.st.device, stream_key);
  }
  auto outcome = req.server.files.open_cached(node_device, o.st.file_id, open.get(), access, c.share_access, &cache);
  post_breaks(req.server, outcome.breaks);
  LOG_DEBUG("create %s: oplock %u lease %u access %x share %x -> %s wait %d breaks %zu granted %u",
            t.path.c_str(), c.oplock_level, lease_req.state, access, c.share_access, nt_status_name(outcome.status),
            outcome.wait, outcome.breaks.size(), outcome.grant.oplock_level);
  if (outcome.wait) return wait_for_breaks(req, std::move(outcome.node), durable);
  if (outcome.status != NtStatus::Success) {
    undo_create(req, t, o, stream_key);  // the open is refused after all
    return outcome.status;
  }
  const bool truncate_on_pool = o.truncate && stream_key.empty() && overwrite_goes_async(req, c, o);
  if (o.truncate) {
    auto truncated = truncate_on_pool       ? prepare_pool_truncate(o, req.tree->streams)
                     : stream_key.empty() ? truncate_opened(o, req.tree->streams)
                                          : truncate_stream(o, stream_key);
    if (!truncated) {
      release(req, outcome.node, open.get());
      return truncated.error();
    }
  }
  if ((o.created || o.truncate) && stream_key.empty())
    if ((st = apply_allocation_size(c, o)) != NtStatus::Success ||
        (!create_eas.empty() && (st = vfs::write_eas(o.fd.get(), create_eas)) != NtStatus::Success)) {
      release(req, outcome.node, open.get());
      undo_create(req, t, o, stream_key);
      return st;
    }
  open->node = outcome.node;
  open->oplock_level = outcome.grant.oplock_level;
  open->lease = outcome.grant.lease;
  open->session_id = req.session->session_id;
  open->tree_id = req.tree->tree_id;
  // Open.ChannelSequence starts at the channel the CREATE came on
  // (smb2/channel_sequence.hpp): its first WRITE from that channel is current.
  if (req.conn.is_smb3()) open->channel_sequence = uint16_t(req.hdr.status);
  open->fd = std::move(o.fd);
  open->path = t.path;
  open->is_directory = o.st.is_directory;
  open->granted_access = access;
  open->share_access = c.share_access;
  open->create_options = c.options;
  open->note_end(o.st.allocation_size);  // what its last close may free
  write_time_seen(*open, o.st.last_write_time);  // shown for a while after its first WRITE (stat after any truncation)
  if (!stream_key.empty()) {
    open->stream = std::make_unique<state::StreamRef>(
        state::StreamRef{o.stream_name.empty() ? path->stream : std::move(o.stream_name), std::move(stream_key),
                         hold.keep(), o.st.is_directory});
    open->is_directory = false;
  }

  LeaseAnswer answer{lease_req, outcome.grant.lease_state, outcome.grant.lease_breaking, outcome.grant.epoch};
  if (outcome.grant.lease) {  // the lease keeps the version it was created with (smb2.lease.v2_epoch2/3)
    answer.request.version = outcome.grant.version;
    answer.request.parent_key = outcome.grant.parent_key;
    answer.request.has_parent = outcome.grant.has_parent;
  }
  bool lease_answered = outcome.grant.oplock_level == state::kOplockLease;
  Bytes& contexts = req.conn.create_contexts_scratch;
  contexts.clear();
  st = answer_create_contexts(req, c.contexts, *open, o.st, lease_answered ? &answer : nullptr, contexts);
  if (st != NtStatus::Success) {
    release(req, open->node, open.get());
    return st;
  }
  if (durable.request()) grant_durable(req, durable, *open, o.action, contexts);
  if (durable.app_instance) remember_app_instance(req, durable, *open, path->path);
  uint32_t attrs = reported_attributes(req.tree->share, o.st, t.leaf, open->fd.get());
  if (o.new_attributes) attrs = vfs::merge_dos_attributes(attrs, *o.new_attributes);
  if (!o.created) {  // a new file has only what statx says: no getxattr
    o.st.attributes = attrs;
    apply_stored_metadata(o.st, open->fd.get());
    attrs = o.st.attributes;
  }
  if (open->stream) attrs = stream_attributes(attrs);
  Bytes pool_response;  // an overwrite on the pool: its response, answered when the truncation is done
  if (truncate_on_pool) {
    pool_response.resize(wire::kHeaderSize);  // write_response() aligns the contexts from the header
    ByteWriter rw(pool_response);
    write_response(rw, *open, o, attrs, contexts, open->oplock_level);
    pool_response.erase(pool_response.begin(), pool_response.begin() + wire::kHeaderSize);
  } else {
    write_response(w, *open, o, attrs, contexts, open->oplock_level);
  }
  if ((o.created || o.truncate) && !truncate_on_pool)  // a new entry, or an entry's data replaced: the directory's leases break
    break_directory_leases(req.server, t.parent_fd.get(), t.leaf, req.conn.client_guid,
                           lease_req.has_parent ? &lease_req.parent_key : nullptr);
  if (outcome.grant.lease && outcome.grant.lease->directory)  // local changes break it too
    watch_leased_directory(req.conn, req.server, *open, o.st.device, o.st.file_id);
  req.compound.file_id = {open->persistent_id, open->volatile_id};
  open->charge = state::OpenCharge(&req.server.budget.open_files, req.session->user_open_count);
  if (truncate_on_pool) return overwrite_on_pool(req, w, std::move(open), std::move(pool_response));
  req.conn.opens.emplace(open->volatile_id, std::move(open));
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
