#include "vfs/ntacl_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.hpp"

namespace ringsmb::vfs {
namespace {

// Largest value read: a 64 KiB descriptor is the SMB2 limit anyway.
constexpr size_t kMaxValue = 65536;

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// fgetxattr, or through /proc for an O_PATH descriptor (EBADF).
ssize_t get_value(int fd, Bytes& buf) {
  buf.resize(512);
  ssize_t n = fgetxattr(fd, kNtAclXattr, buf.data(), buf.size());
  if (n < 0 && errno == EBADF) n = getxattr(proc_fd_path(fd).c_str(), kNtAclXattr, buf.data(), buf.size());
  if (n < 0 && errno == ERANGE) {
    buf.resize(kMaxValue);
    n = fgetxattr(fd, kNtAclXattr, buf.data(), buf.size());
    if (n < 0 && errno == EBADF) n = getxattr(proc_fd_path(fd).c_str(), kNtAclXattr, buf.data(), buf.size());
  }
  if (n >= 0) buf.resize(size_t(n));
  return n;
}

SharedSd deny_all() {
  auto sd = std::make_shared<ntacl::SecurityDescriptor>();
  sd->control = ntacl::SE_SELF_RELATIVE | ntacl::SE_DACL_PRESENT;
  sd->dacl = ntacl::Acl{};
  return sd;
}

}  // namespace

Bytes encode_ntacl_value(const ntacl::SecurityDescriptor& sd) {
  Bytes out{kNtAclVersion};
  Bytes body = ntacl::serialize(sd);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

SharedSd decode_ntacl_value(ByteSpan value) {
  if (value.empty() || value[0] != kNtAclVersion) return deny_all();
  auto sd = ntacl::parse(value.subspan(1));
  if (!sd) return deny_all();
  return std::make_shared<const ntacl::SecurityDescriptor>(std::move(*sd));
}

SharedSd read_ntacl_xattr(int fd) {
  Bytes buf;
  ssize_t n = get_value(fd, buf);
  if (n < 0) {
    // ENODATA: none stored. ENOTSUP: no trusted xattrs here. Without
    // CAP_SYS_ADMIN the kernel also answers ENODATA (docs/security.md).
    if (errno != ENODATA && errno != ENOTSUP && errno != ENOENT) LOG_WARN("reading %s: %s", kNtAclXattr, strerror(errno));
    return nullptr;
  }
  SharedSd sd = decode_ntacl_value(buf);
  if (sd->dacl && sd->dacl->aces.empty() && !sd->owner) LOG_WARN("%s: unreadable value, access denied", kNtAclXattr);
  return sd;
}

int write_ntacl_xattr(int fd, const ntacl::SecurityDescriptor& sd) {
  Bytes v = encode_ntacl_value(sd);
  int r = fsetxattr(fd, kNtAclXattr, v.data(), v.size(), 0);
  if (r != 0 && errno == EBADF) r = setxattr(proc_fd_path(fd).c_str(), kNtAclXattr, v.data(), v.size(), 0);
  return r == 0 ? 0 : errno;
}

int remove_ntacl_xattr(int fd) {
  int r = fremovexattr(fd, kNtAclXattr);
  if (r != 0 && errno == EBADF) r = removexattr(proc_fd_path(fd).c_str(), kNtAclXattr);
  return r == 0 || errno == ENODATA ? 0 : errno;
}

NtAclStore::NtAclStore(size_t max_entries) : max_per_shard_(std::max<size_t>(1, max_entries / kShards)) {}

void NtAclStore::load_state(const std::string& state_directory) {
  state_file_ = state_directory + "/" + kNtAclInUseFile;
  struct stat st {};
  if (stat(state_file_.c_str(), &st) == 0) in_use_.store(true);
}

void NtAclStore::mark_in_use() {
  if (in_use_.exchange(true) || state_file_.empty()) return;
  int fd = open(state_file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    LOG_WARN("cannot create %s: %s; stored descriptors are ignored after a restart until it exists",
             state_file_.c_str(), strerror(errno));
    return;
  }
  close(fd);
}

SharedSd NtAclStore::lookup(int fd, const FileStat& st) {
  Key k{st.device, st.file_id};
  Shard& s = shard(k);
  {
    std::lock_guard lock(s.mu);
    auto it = s.map.find(k);
    if (it != s.map.end() && it->second.birth == st.creation_time) return it->second.sd;
  }
  SharedSd sd = read_ntacl_xattr(fd);
  remember(st, sd);
  return sd;
}

void NtAclStore::remember(const FileStat& st, SharedSd sd) {
  Key k{st.device, st.file_id};
  Shard& s = shard(k);
  std::lock_guard lock(s.mu);
  if (s.map.size() >= max_per_shard_ && !s.map.contains(k)) s.map.clear();  // bounded; refilled on demand
  s.map[k] = Entry{st.creation_time, std::move(sd)};
}

int NtAclStore::store(int fd, const FileStat& st, SharedSd sd) {
  int err = sd ? write_ntacl_xattr(fd, *sd) : remove_ntacl_xattr(fd);
  if (err == 0) {
    remember(st, std::move(sd));
  } else {
    Key k{st.device, st.file_id};
    Shard& s = shard(k);
    std::lock_guard lock(s.mu);
    s.map.erase(k);  // unknown now: read again next time
  }
  return err;
}

size_t NtAclStore::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.map.size();
  }
  return n;
}

}  // namespace ringsmb::vfs
