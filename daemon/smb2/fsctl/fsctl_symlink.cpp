// FSCTL_SET_REPARSE_POINT and FSCTL_DELETE_REPARSE_POINT for symbolic
// links (MS-FSCC 2.3.65, 2.3.5; MS-FSA 2.1.5.10.37, 2.1.5.10.6), where the
// share allows them ("client symlinks = yes"). A client makes a symlink as
// Windows' mklink and the Linux kernel client do: it creates an empty file
// (or directory), then sets a symlink reparse point on it. The server keeps
// it as a real Linux symlink, which local programs and NFS see: the empty
// entry is replaced by a symlink made under a temporary name and renamed
// over it (exchanged, for a directory), so the name never goes missing.
// The target is stored as the client gave it; nothing on the server follows
// it out of the share: CREATE resolves every name beneath the share root
// (vfs/paths.hpp) and answers STATUS_STOPPED_ON_SYMLINK for a link it meets
// last, so that the client resolves it (docs/security.md).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <string>

#include "smb2/fsctl/fsctl.hpp"
#include "smb2/fsctl/fsctl_reparse.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/security/access_check.hpp"
#include "vfs/directory_empty.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kReparseHeaderSize = 8;  // ReparseTag, ReparseDataLength, Reserved
constexpr uint32_t kFileDirectoryFile = 0x1;  // CreateOptions FILE_DIRECTORY_FILE

// The open's parent directory and leaf, where its entry can be replaced.
struct Entry {
  state::UniqueFd parent;
  std::string leaf;
};

// The open's entry, by name and checked to be the open's file (a name
// another file was renamed to in the meantime is left alone).
NtStatus find_entry(Request& req, const state::Open& open, Entry& e, struct stat& st) {
  if (open.path.empty() || open.stream) return NtStatus::InvalidParameter;  // the share root, a stream
  std::string_view parent, leaf;
  vfs::split_parent(open.path, parent, leaf);
  const int fd = vfs::open_beneath(req.tree->root.get(), parent.empty() ? "." : std::string(parent).c_str(),
                                   O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return vfs::open_beneath_status(fd);
  e.parent.reset(fd);
  e.leaf = std::string(leaf);
  struct stat mine;
  if (fstat(open.fd.get(), &mine) != 0 || fstatat(fd, e.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return nt_status_from_errno(errno);
  if (mine.st_dev != st.st_dev || mine.st_ino != st.st_ino) return NtStatus::ObjectNameNotFound;
  return NtStatus::Success;
}

bool directory_is_empty(int parent, const std::string& leaf) {
  const int fd = openat(parent, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  auto empty = vfs::directory_empty(fd);
  close(fd);
  return empty && *empty;
}

// Puts TMP (just made) in LEAF's place: a rename over a file or a symlink;
// where either is a directory, an exchange, then the old entry removed (a
// directory must be empty; if it is not, the exchange is undone).
NtStatus put_in_place(int parent, const std::string& tmp, const std::string& leaf, bool new_dir, bool old_dir) {
  if (!new_dir && !old_dir) {
    if (renameat(parent, tmp.c_str(), parent, leaf.c_str()) == 0) return NtStatus::Success;
    return nt_status_from_errno(errno);
  }
  if (renameat2(parent, tmp.c_str(), parent, leaf.c_str(), RENAME_EXCHANGE) != 0) return nt_status_from_errno(errno);
  if (unlinkat(parent, tmp.c_str(), old_dir ? AT_REMOVEDIR : 0) == 0) return NtStatus::Success;
  const int err = errno;
  renameat2(parent, tmp.c_str(), parent, leaf.c_str(), RENAME_EXCHANGE);
  return err == ENOTEMPTY || err == EEXIST ? NtStatus::DirectoryNotEmpty : nt_status_from_errno(err);
}

// Makes an entry under a fresh temporary name with MAKE(name) (0 or an
// errno), then puts it in LEAF's place; the temporary name is gone after.
template <typename Make>
NtStatus replace_entry(int parent, const std::string& leaf, bool new_dir, bool old_dir, Make make) {
  std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string tmp = ".ringsmb-reparse-" + std::to_string(rng());
    if (int err = make(tmp)) {
      if (err == EEXIST) continue;
      return nt_status_from_errno(err);
    }
    NtStatus st = put_in_place(parent, tmp, leaf, new_dir, old_dir);
    if (st != NtStatus::Success) unlinkat(parent, tmp.c_str(), new_dir ? AT_REMOVEDIR : 0);
    return st;
  }
  return NtStatus::ObjectNameCollision;
}

// The open now names the new entry: its descriptor is the new one, O_PATH
// (the link itself, as a FILE_OPEN_REPARSE_POINT open holds it).
void reopen(state::Open& open, const Entry& e) {
  const int fd = openat(e.parent.get(), e.leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) open.fd.reset(fd);
}

NtStatus check_reparse_change(FsctlCall& call) {
  if (!call.req.tree->share.client_symlinks) return NtStatus::AccessDenied;
  return check_change(*call.req.tree, *call.open, Change::Reparse);
}

}  // namespace

NtStatus fsctl_set_reparse_point(FsctlCall& call) {
  state::Open& open = *call.open;
  if (NtStatus s = check_reparse_change(call); s != NtStatus::Success) return s;
  auto target = symlink_target_from_reparse(call.q.input);
  if (!target) return target.error();
  Entry e;
  struct stat st;
  if (NtStatus s = find_entry(call.req, open, e, st); s != NtStatus::Success) return s;
  // A Linux symlink holds no data: a file's contents would be lost.
  if (S_ISREG(st.st_mode) && st.st_size != 0) return NtStatus::NotSupported;
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) return NtStatus::NotSupported;
  const bool directory = S_ISDIR(st.st_mode);
  if (directory && !directory_is_empty(e.parent.get(), e.leaf)) return NtStatus::DirectoryNotEmpty;
  const int parent = e.parent.get();
  NtStatus s = replace_entry(parent, e.leaf, false, directory, [&](const std::string& tmp) {
    return symlinkat(target->c_str(), parent, tmp.c_str()) == 0 ? 0 : errno;
  });
  if (s == NtStatus::Success) reopen(open, e);
  return s;
}

// The link is replaced by an empty file, as a Windows reparse point leaves
// its file behind; a directory when the link was one (mklink /D).
NtStatus fsctl_delete_reparse_point(FsctlCall& call) {
  state::Open& open = *call.open;
  if (NtStatus s = check_reparse_change(call); s != NtStatus::Success) return s;
  ByteReader r(call.q.input);
  const uint32_t tag = r.u32();
  const uint16_t data_length = r.u16();
  if (!r.ok() || call.q.input.size() != kReparseHeaderSize) return NtStatus::IoReparseDataInvalid;
  if (data_length != 0) return NtStatus::IoReparseDataInvalid;
  Entry e;
  struct stat st;
  if (NtStatus s = find_entry(call.req, open, e, st); s != NtStatus::Success) return s;
  if (!S_ISLNK(st.st_mode)) return NtStatus::NotAReparsePoint;
  if (tag != IO_REPARSE_TAG_SYMLINK && tag != IO_REPARSE_TAG_NFS && tag != IO_REPARSE_TAG_LX_SYMLINK)
    return NtStatus::IoReparseTagMismatch;
  const int parent = e.parent.get();
  const bool directory = open.is_directory || (open.create_options & kFileDirectoryFile);
  const auto& share = call.req.tree->share;
  NtStatus s = replace_entry(parent, e.leaf, directory, false, [&](const std::string& tmp) {
    if (directory) return mkdirat(parent, tmp.c_str(), new_dir_mode(share)) == 0 ? 0 : errno;
    const int fd = openat(parent, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          new_file_mode(share));
    if (fd < 0) return errno;
    close(fd);
    return 0;
  });
  if (s == NtStatus::Success) reopen(open, e);
  return s;
}

}  // namespace ringsmb::smb2
