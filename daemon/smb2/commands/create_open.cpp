// SMB2 CREATE: finding the target beneath the share root (case, 8.3
// names) and opening or making it on disk, with the disposition's rules;
// the truncation of an overwrite and the undoing of a refused create.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "common/log.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/commands/create_contexts.hpp"
#include "smb2/commands/create_open.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "smb2/security/security_info.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/fruit/adouble_convert.hpp"
#include "smb2/fruit/afp_streams.hpp"
#include "smb2/fruit/netatalk.hpp"
#include "smb2/streams/stream_io.hpp"
#include "vfs/allocation.hpp"
#include "vfs/dos_xattr.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::create {
namespace {

int open_flags_for(uint32_t access, bool is_dir, bool read_only = false) {
  if (is_dir) return O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  if (read_only) access &= ~(FILE_WRITE_DATA | FILE_APPEND_DATA);
  bool rd = access & (FILE_READ_DATA | FILE_EXECUTE);
  bool wr = access & (FILE_WRITE_DATA | FILE_APPEND_DATA);
  int f = wr ? (rd ? O_RDWR : O_WRONLY) : O_RDONLY;
  return f | O_CLOEXEC | O_NOFOLLOW;
}


int open_parent(int root, std::string_view parent) {
  return vfs::open_beneath(root, parent.empty() ? "." : std::string(parent).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC,
                           0);
}

// A directory of PATH that openat2 would not follow beneath the root: the
// first symlink on the way (one leading out of the share, or through
// another that does) stops the CREATE with its target and the rest of the
// name, for the client to resolve (MS-SMB2 2.2.2.2.1). ACCESS_DENIED when
// the refusal was no symlink of the path.
NtStatus stop_at_directory_link(int root, std::string_view dirs, std::string_view path, Opened& o) {
  state::UniqueFd dir(vfs::open_beneath(root, ".", O_PATH | O_DIRECTORY, 0));
  for (size_t start = 0; dir && start < dirs.size();) {
    const size_t end = std::min(dirs.find('/', start), dirs.size());
    const std::string comp(dirs.substr(start, end - start));
    struct stat st;
    if (fstatat(dir.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) break;
    if (S_ISLNK(st.st_mode)) {
      std::string target(4096, '\0');
      const ssize_t n = readlinkat(dir.get(), comp.c_str(), target.data(), target.size());
      if (n <= 0 || size_t(n) >= target.size()) break;
      target.resize(size_t(n));
      const size_t rest_bytes = vfs::utf8_to_utf16le(path.substr(end)).size();  // "\rest", as the client sent it
      if (rest_bytes > 0xFFFF) break;
      o.symlink_target = std::move(target);
      o.symlink_unparsed_bytes = uint16_t(rest_bytes);
      return NtStatus::StoppedOnSymlink;
    }
    dir.reset(vfs::open_beneath(dir.get(), comp.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW, 0));
    start = end + 1;
  }
  return NtStatus::AccessDenied;
}

// Finds the parent directory of the target. The common case costs one open:
// the parent exists under the exact name. Only a miss on the parent walks
// the path component by component through the folded-name index; the
// leaf's case is settled in open_or_create, which stats it anyway.
NtStatus locate(Request& req, const CreateRequest& c, const vfs::SmbPath& p, Target& t, Opened& o) {
  int root = c.root_fd;
  bool fold = !req.tree->share.case_sensitive;
  t.path = p.path;
  vfs::split_parent(t.path, t.parent, t.leaf);
  int fd = open_parent(root, t.parent);
  if (fd < 0 && fold && (-fd == ENOENT || -fd == ENOTDIR)) {
    t.exact_name_missing = false;  // says nothing of the name the index resolves to
    t.path = vfs::resolve_case_insensitive(req.server.names, root, p.path);
    vfs::split_parent(t.path, t.parent, t.leaf);
    // A short name may stand for a vetoed name (Target::vetoed).
    if (t.path != p.path && vetoes_anything(req.tree->share))
      if (NtStatus v = veto_status(req.tree->share, t.path); v != NtStatus::Success) return v;
    fd = open_parent(root, t.parent);
  }
  if (fd == -EXDEV || fd == -ELOOP) return stop_at_directory_link(root, t.parent, t.path, o);
  if (fd < 0) return (-fd == ENOENT || -fd == ENOTDIR) ? NtStatus::ObjectPathNotFound : vfs::open_beneath_status(fd);
  t.parent_fd.reset(fd);
  return NtStatus::Success;
}

// A disposition that makes the file when it does not exist, outside a snapshot.
bool may_create(const CreateRequest& c) {
  return c.disposition != FILE_OPEN && c.disposition != FILE_OVERWRITE && !c.in_snapshot;
}

// Stats the leaf; when it is missing under the client's spelling on a
// case-insensitive share, looks it up in the folded-name index, then among
// the generated 8.3 names (vfs/short_names.hpp), and switches the target to
// the on-disk name. A short name no entry has, but which a client was told
// for a file since gone, switches the target to that file's long name (a
// create then makes the long name, as Samba does).
//
// When the fast path's openat2 already found the exact name missing
// (Target::exact_name_missing), or the request only creates (FILE_CREATE:
// an existing name is a collision, and O_EXCL has the last word), a
// case-insensitive share asks the index first and stats only what it
// names: a lookup of a name that does not exist, and the create of a new
// file, cost no failing statx. The index lists every entry, so an exact
// name that openat2 could not open (a dangling symlink) is still stat'ed.
Result<vfs::FileStat> stat_leaf(Request& req, const CreateRequest& c, Target& t) {
  if (t.path.empty()) return vfs::stat_fd(t.parent_fd.get());
  const bool skip_exact =
      (t.exact_name_missing || c.disposition == FILE_CREATE) && !req.tree->share.case_sensitive;
  Result<vfs::FileStat> st = Unexpected(NtStatus::ObjectNameNotFound);
  if (!skip_exact) {
    st = vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());
    if (st || st.error() != NtStatus::ObjectNameNotFound || req.tree->share.case_sensitive) return st;
  }
  // A name no entry has is made next (open_or_create): its change to the
  // directory begins on this lookup's fstat.
  std::optional<std::string> real;
  if (may_create(c))
    real = req.server.names.find_or_begin(t.parent_fd.get(), t.leaf, t.create_change);
  else
    real = req.server.names.find(t.parent_fd.get(), t.leaf);
  if (skip_exact && real && *real == t.leaf) return vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());
  if (!real) real = vfs::find_by_short_name(t.parent_fd.get(), t.leaf);  // only for the generated form
  if (!real) real = req.server.short_names.recall(req.tree->share.name, t.parent, t.leaf);
  if (!real || *real == t.leaf) return st;
  if (vetoes_anything(req.tree->share) && is_vetoed_name(req.tree->share, *real)) {
    t.vetoed = true;
    return st;
  }
  t.path = std::string(t.parent) + (t.parent.empty() ? "" : "/") + *real;
  vfs::split_parent(t.path, t.parent, t.leaf);
  return vfs::stat_at(t.parent_fd.get(), std::string(t.leaf).c_str());
}

// MS-FSA 2.1.5.1.2: what an existing file must be for this request.
NtStatus check_existing(const CreateRequest& c, const vfs::FileStat& st) {
  // A directory has no data stream to open.
  if (st.is_directory && (c.options & FILE_NON_DIRECTORY_FILE || c.data_stream)) return NtStatus::FileIsADirectory;
  if (!st.is_directory && (c.options & FILE_DIRECTORY_FILE)) return NtStatus::NotADirectory;
  return NtStatus::Success;
}

constexpr uint32_t kReadData = FILE_READ_DATA | FILE_EXECUTE;
constexpr uint32_t kWriteData = FILE_WRITE_DATA | FILE_APPEND_DATA;

// What an O_PATH descriptor cannot serve. FILE_EXECUTE is not among them:
// it is a right the descriptor decides (the kernel's x bit is not asked
// for an open), and READ on such an open fails all the same.
constexpr uint32_t kFdData = FILE_READ_DATA | kWriteData;

// MAXIMUM_ALLOWED asks for what it can get: when the kernel refuses the
// open its data rights need, the data rights it added (not those asked for
// by name) are given up, writing first, then reading, then both, so that
// the attributes-only open may follow. `access` becomes what was opened.
int open_for_maximum(int dir_fd, const char* leaf, bool is_dir, uint32_t asked, uint32_t& access) {
  int fd = -EACCES;
  for (uint32_t drop : {kWriteData, kReadData, kReadData | kWriteData}) {
    const uint32_t narrower = access & ~(drop & ~asked);
    if (narrower == access) continue;
    fd = vfs::open_beneath(dir_fd, leaf, open_flags_for(narrower, is_dir), 0);
    if (fd != -EACCES || !(narrower & kFdData)) {
      access = fd == -EACCES ? narrower | (access & FILE_EXECUTE) : narrower;
      return fd;
    }
  }
  return fd;
}

// A symlink met as the last component of a name, not opened as the
// reparse point it is: STATUS_STOPPED_ON_SYMLINK with its target, which the
// client resolves (MS-SMB2 3.3.5.9; the server never follows it out of the
// share, docs/security.md).
NtStatus stop_on_symlink(const Target& t, Opened& o) {
  std::string target(4096, '\0');
  const ssize_t n = readlinkat(t.parent_fd.get(), std::string(t.leaf).c_str(), target.data(), target.size());
  if (n <= 0 || size_t(n) >= target.size()) return NtStatus::AccessDenied;
  target.resize(size_t(n));
  o.symlink_target = std::move(target);
  return NtStatus::StoppedOnSymlink;
}

// The symlink itself (FILE_OPEN_REPARSE_POINT), never what it points at;
// its data cannot be overwritten.
NtStatus open_symlink(const CreateRequest& c, Target& t, Opened& o) {
  if (overwrites(c)) return NtStatus::AccessDenied;
  const int fd = vfs::open_beneath(t.parent_fd.get(), std::string(t.leaf).c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) return vfs::open_beneath_status(fd);
  o.fd.reset(fd);
  o.action = FILE_OPENED;
  return NtStatus::Success;
}

NtStatus open_existing(Request& req, const CreateRequest& c, uint32_t access, Target& t, const vfs::FileStat& st,
                       Opened& o) {
  if (S_ISLNK(st.mode) && !t.leaf.empty())
    return (c.options & FILE_OPEN_REPARSE_POINT) ? open_symlink(c, t, o) : stop_on_symlink(t, o);
  if (NtStatus s = check_existing(c, st); s != NtStatus::Success) return s;
  bool overwrite = overwrites(c);
  if (overwrite && st.is_directory) return NtStatus::InvalidParameter;
  // MAXIMUM_ALLOWED gets only what the mode gives (apply_security), and on
  // a READONLY file no write rights: the file is opened for no more, so
  // that the kernel does not refuse what was never going to be granted.
  const uint32_t asked = map_generic(c.desired_access);
  const uint32_t wanted = access;
  const bool maximum = asked & MAXIMUM_ALLOWED;
  if (maximum) access &= asked | mode_access(req, st);
  if (maximum && !(asked & kWriteData) && is_readonly_file(st)) access &= ~kWriteData;
  int flags = open_flags_for(access, st.is_directory, c.in_snapshot);
  if (overwrite) {  // the data is replaced: the descriptor must be writable
    bool rd = access & kReadData;
    flags = (flags & ~O_ACCMODE) | (rd ? O_RDWR : O_WRONLY);
  }
  std::string leaf(t.leaf.empty() ? "." : t.leaf);
  int fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), flags, 0);
  if (fd == -EACCES && maximum && !overwrite && !c.in_snapshot)
    fd = open_for_maximum(t.parent_fd.get(), leaf.c_str(), st.is_directory, asked, access);
  // Attributes only: no read permission needed. The open is then granted
  // nothing the mode does not give (check_open_access).
  if (fd == -EACCES && !(access & kFdData) && !overwrite) {
    fd = vfs::open_beneath(t.parent_fd.get(), leaf.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW, 0);
    o.path_only = fd >= 0;
  }
  if (fd < 0) return vfs::open_beneath_status(fd);
  o.fd.reset(fd);
  o.unopened = wanted & ~access;
  o.truncate = overwrite;
  o.action = c.disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED : overwrite ? FILE_OVERWRITTEN : FILE_OPENED;
  return NtStatus::Success;
}

// The common open in one openat2 from the share root and one statx: the
// name exists exactly as given and is opened, not created or overwritten.
// Returns false when the slow path must decide: a miss (maybe another case,
// maybe a create), a directory opened for writing, a symlink, a permission
// error that an attribute-only open may get around.
bool open_exact(const CreateRequest& c, uint32_t access, const vfs::SmbPath& p, Target& t,
                Opened& o, NtStatus& status) {
  if ((c.disposition != FILE_OPEN && c.disposition != FILE_OPEN_IF) || p.path.empty()) return false;
  // A symlink asked for as a reparse point is never followed: the slow path opens it.
  const int nofollow = (c.options & FILE_OPEN_REPARSE_POINT) ? O_NOFOLLOW : 0;
  int fd = vfs::open_beneath(c.root_fd, p.path.c_str(),
                             open_flags_for(access, c.options & FILE_DIRECTORY_FILE, c.in_snapshot) | nofollow, 0);
  t.exact_name_missing = fd == -ENOENT;
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
int make_entry(Request& req, const CreateRequest& c, uint32_t access, Target& t, const std::string& leaf) {
  auto change = t.create_change ? std::move(*t.create_change) : req.server.names.begin_change(t.parent_fd.get());
  t.create_change.reset();
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

NtStatus open_or_create_stated(Request& req, const CreateRequest& c, uint32_t access, Target& t, Opened& o,
                               const Result<vfs::FileStat>& st) {
  if (st) {
    if (c.disposition == FILE_CREATE) return NtStatus::ObjectNameCollision;
    if (c.disposition != FILE_OPEN && c.disposition != FILE_OPEN_IF)
      if (NtStatus s = check_tree_change(*req.tree, Change::Overwrite); s != NtStatus::Success) return s;
    return open_existing(req, c, access, t, *st, o);
  }
  if (st.error() != NtStatus::ObjectNameNotFound) return st.error();
  if (t.vetoed || c.disposition == FILE_OPEN || c.disposition == FILE_OVERWRITE) return NtStatus::ObjectNameNotFound;
  if (c.in_snapshot) return NtStatus::MediaWriteProtected;  // nothing is made in a snapshot
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
    if (again) return open_existing(req, c, access, t, *again, o);
  }
  return s;
}

// The lookup may have begun the create's change to the directory
// (Target::create_change): whatever did not make the entry ends it.
NtStatus open_or_create(Request& req, const CreateRequest& c, uint32_t access, Target& t, Opened& o) {
  auto st = stat_leaf(req, c, t);
  NtStatus s = open_or_create_stated(req, c, access, t, o, st);
  if (t.create_change) {
    t.create_change->unchanged();
    t.create_change.reset();
  }
  return s;
}

}  // namespace

// A data file with FILE_ATTRIBUTE_READONLY (MS-FSA 2.1.5.1.2.1 applies to
// it; a directory's READONLY does not refuse writes to it).
bool is_readonly_file(const vfs::FileStat& st) {
  return !st.is_directory && (vfs::dos_attributes(st, {}, false) & vfs::FILE_ATTRIBUTE_READONLY);
}

bool overwrites(const CreateRequest& c) {
  return c.disposition == FILE_OVERWRITE || c.disposition == FILE_OVERWRITE_IF || c.disposition == FILE_SUPERSEDE;
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

// Opens or creates the target: the one-open fast path when it applies,
// else parent directory, case resolution and disposition.
NtStatus open_target(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p, Target& t,
                     Opened& o) {
  NtStatus st;
  if (open_exact(c, access, p, t, o, st)) return st;
  if ((st = locate(req, c, p, t, o)) != NtStatus::Success) return st;
  if ((st = open_or_create(req, c, access, t, o)) != NtStatus::Success) return st;
  auto stat = vfs::stat_fd(o.fd.get());
  if (!stat) return stat.error();
  o.st = *stat;
  return NtStatus::Success;
}

namespace {

// Is `fd` open for reading / for writing (an O_PATH or a directory's fd
// is neither / not writable)?
bool fd_allows(int fd, bool write) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_PATH)) return false;
  const int mode = flags & O_ACCMODE;
  return write ? mode == O_WRONLY || mode == O_RDWR : mode == O_RDONLY || mode == O_RDWR;
}

// The stream's data is the file's: the data rights the open asks for must
// be the user's on the file. Opening the file for them made the kernel
// check; where its descriptor could not be opened so (a directory's is
// read-only whatever the access), ask it (smb2/streams/stream_io.hpp).
NtStatus check_stream_data_access(Request& req, const CreateRequest& c, uint32_t access, const Opened& o) {
  if (o.created) return NtStatus::Success;
  const int fd = o.fd.get();
  const bool reads = access & (FILE_READ_DATA | FILE_EXECUTE);
  const bool writes = access & (FILE_WRITE_DATA | FILE_APPEND_DATA);
  if (reads && !fd_allows(fd, false))
    if (NtStatus st = check_stream_readable(fd); st != NtStatus::Success) return st;
  if ((writes && !fd_allows(fd, true)) || (c.options & FILE_DELETE_ON_CLOSE))
    if (NtStatus st = check_stream_writable(req, fd, o.st); st != NtStatus::Success) return st;
  return NtStatus::Success;
}

// Before AFP_AfpInfo or AFP_Resource of an existing file is opened on a
// fruit share: macOS's "._" file next to it becomes its streams, and
// Netatalk's metadata its AfpInfo (smb2/fruit/).
void prepare_afp_stream(Request& req, const CreateRequest& c, const vfs::SmbPath& p, Target& t, const Opened& o) {
  const uint8_t afp = fruit::afp_stream_of(req, p.stream);
  if (afp == fruit::kAfpNone) return;
  if (!t.parent_fd) {  // the one-open fast path did not open it
    int fd = open_parent(c.root_fd, t.parent);
    if (fd >= 0) t.parent_fd.reset(fd);
  }
  if (t.parent_fd) fruit::convert_appledouble(req, t.parent_fd.get(), t.leaf, o.fd.get(), o.st);
  if (afp == fruit::kAfpInfo && fruit::netatalk_metadata(req)) fruit::import_netatalk_metadata(o.fd.get());
}

}  // namespace

// A named stream: the file is opened (or made, when the disposition may
// create) as for its data, with the user's identity, so the kernel checks
// the user's rights on the file; then the disposition applies to the
// stream (smb2/streams/stream_io.cpp), which checks the rights a new stream or an
// overwrite needs. `o.st` then describes the stream.
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
  if ((st = check_stream_data_access(req, c, access, o)) != NtStatus::Success) return st;
  if (!o.created) prepare_afp_stream(req, c, p, t, o);
  StreamCreate sc;
  const StreamTarget target{o.fd.get(), &o.st, o.created, &key, p.stream};
  if ((st = open_stream(req, c.disposition, target, sc)) != NtStatus::Success) return st;
  o.truncate = sc.truncate;
  o.stream_created = sc.created;
  o.stream_name = std::move(sc.name);
  o.action = sc.action;
  o.st.end_of_file = sc.truncate ? 0 : sc.size;
  o.st.allocation_size = vfs::stream_allocation(o.st.end_of_file);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2::create
