#include "smb2/fruit/netatalk.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>

#include "smb2/fruit/afp_info.hpp"
#include "smb2/fruit/appledouble.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "smb2/engine/conn_state.hpp"
#include "state/lock_table.hpp"
#include "vfs/stream_store.hpp"
#include "vfs/xattr_io.hpp"

namespace ringsmb::smb2::fruit {
namespace {

// Netatalk's attribute of `fd`, parsed, with its bytes; nullopt if none.
struct NetatalkMetadata {
  Bytes raw;
  AppleDouble ad;
};
std::optional<NetatalkMetadata> read_netatalk(int fd) {
  Bytes raw(kAdMaxHeaderBytes);
  ssize_t n = vfs::xattr_io::get_value(fd, kNetatalkMetadataXattr, raw.data(), raw.size());
  if (n <= 0) return std::nullopt;
  raw.resize(size_t(n));
  auto ad = parse_appledouble(raw, raw.size());
  if (!ad || !ad->finder_info) return std::nullopt;
  return NetatalkMetadata{std::move(raw), std::move(*ad)};
}

bool all_zero(ByteSpan b) { return std::all_of(b.begin(), b.end(), [](uint8_t c) { return c == 0; }); }

// Netatalk's lock offsets (its adouble.h): a base just below 2^63, then
// open-for-write, open-for-read, (resource fork: 2, 3), deny-write, deny-read.
constexpr uint64_t kFileLockBase = 0x7FFFFFFFFFFFFFFFull - 9;
constexpr uint64_t kLockOpenWrite = kFileLockBase + 0, kLockOpenRead = kFileLockBase + 1;
constexpr uint64_t kLockDenyWrite = kFileLockBase + 4, kLockDenyRead = kFileLockBase + 5;
constexpr uint32_t kFileReadData = 0x1, kFileWriteData = 0x2, kFileShareRead = 0x1, kFileShareWrite = 0x2;

// Whether anyone holds a lock on byte `offset` of the file: an SMB client
// (the lock table) or a process such as Netatalk (fcntl).
bool locked(Request& req, int fd, const vfs::FileStat& st, uint64_t offset) {
  if (req.server.locks.check_io(st.device, st.file_id, nullptr, offset, 1, true) != NtStatus::Success) return true;
  struct flock fl{};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = off_t(offset);
  fl.l_len = 1;
  if (fcntl(fd, F_GETLK, &fl) != 0) return false;  // an O_PATH descriptor: nothing to ask with
  return fl.l_type != F_UNLCK;
}

}  // namespace

NtStatus check_netatalk_locks(Request& req, int fd, const vfs::FileStat& st, uint32_t access, uint32_t share_access) {
  if (!fruit_share(req) || !req.tree->share.fruit.netatalk_locking || st.is_directory) return NtStatus::Success;
  const bool conflict = ((access & kFileReadData) && locked(req, fd, st, kLockDenyRead)) ||
                        (!(share_access & kFileShareRead) && locked(req, fd, st, kLockOpenRead)) ||
                        ((access & kFileWriteData) && locked(req, fd, st, kLockDenyWrite)) ||
                        (!(share_access & kFileShareWrite) && locked(req, fd, st, kLockOpenWrite));
  return conflict ? NtStatus::SharingViolation : NtStatus::Success;
}

bool netatalk_metadata(const Request& req) {
  return fruit_share(req) && req.tree->share.fruit.metadata == config::FruitOptions::Metadata::Netatalk;
}

void import_netatalk_metadata(int fd) {
  auto meta = read_netatalk(fd);
  if (!meta) return;
  const std::string& key = afp_info_key();
  const auto& fi = *meta->ad.finder_info;
  if (all_zero(fi)) {
    vfs::remove_stream(fd, key);  // Netatalk says there is none
    return;
  }
  const Bytes info = afp_info_with(ByteSpan(fi.data(), fi.size()));
  auto current = vfs::read_stream_range(fd, key, 0, kAfpInfoBytes);
  if (current && current->size() == kAfpInfoBytes &&
      std::equal(fi.begin(), fi.end(), current->begin() + kAfpFinderInfoAt))
    return;  // the usual case: nothing changed
  NtStatus s = vfs::create_stream(fd, key, kAfpInfoStream);
  if (s != NtStatus::Success && s != NtStatus::ObjectNameCollision) return;
  if (!current || current->size() != kAfpInfoBytes) vfs::write_stream_at(fd, key, 0, info);
  else vfs::write_stream_at(fd, key, kAfpFinderInfoAt, ByteSpan(fi.data(), fi.size()));
}

void export_netatalk_metadata(int fd, ByteSpan afp_info) {
  auto meta = read_netatalk(fd);
  if (!meta) return;
  uint8_t fi[kAdFinderInfoBytes] = {};
  if (afp_info.size() >= kAfpFinderInfoAt + kAdFinderInfoBytes)
    std::memcpy(fi, afp_info.data() + kAfpFinderInfoAt, kAdFinderInfoBytes);
  std::memcpy(meta->raw.data() + meta->ad.finder_info_offset, fi, kAdFinderInfoBytes);
  vfs::xattr_io::set_value(fd, kNetatalkMetadataXattr, meta->raw.data(), meta->raw.size(), XATTR_REPLACE);
}

}  // namespace ringsmb::smb2::fruit
