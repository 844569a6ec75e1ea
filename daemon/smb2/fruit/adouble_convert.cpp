#include "smb2/fruit/adouble_convert.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "smb2/fruit/afp_info.hpp"
#include "smb2/fruit/appledouble.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "state/session.hpp"
#include "vfs/fd_io.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {
namespace {

constexpr size_t kCopyChunk = 1 << 20;

// Writes `data` as the whole of stream `name` of `fd`.
NtStatus replace_stream(int fd, std::string_view name, ByteSpan data, uint64_t limit) {
  auto key = vfs::stream_xattr_name(name);
  if (!key) return key.error();
  if (NtStatus s = vfs::create_stream(fd, *key, name); s != NtStatus::Success && s != NtStatus::ObjectNameCollision)
    return s;
  if (NtStatus s = vfs::set_stream_size(fd, *key, 0, limit); s != NtStatus::Success) return s;
  return data.empty() ? NtStatus::Success : vfs::write_stream_at(fd, *key, 0, data, limit);
}

Result<Bytes> pread_exact(int fd, uint64_t offset, size_t length) {
  Bytes b(length);
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, b.data() + got, length - got, off_t(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected(nt_status_from_errno(errno));
    if (n == 0) break;
    got += size_t(n);
  }
  b.resize(got);
  return b;
}

// The resource fork of the "._" file `ad_fd` onto AFP_Resource, in pieces.
NtStatus move_resource_fork(int ad_fd, const AppleDouble& ad, int fd) {
  const std::string& key = afp_resource_key();
  if (NtStatus s = vfs::create_stream(fd, key, kAfpResourceStream);
      s != NtStatus::Success && s != NtStatus::ObjectNameCollision)
    return s;
  if (NtStatus s = vfs::set_stream_size(fd, key, 0, max_resource_fork_bytes()); s != NtStatus::Success) return s;
  for (uint64_t at = 0; at < ad.resource_fork_length;) {
    auto piece = pread_exact(ad_fd, ad.resource_fork_offset + at,
                             size_t(std::min<uint64_t>(kCopyChunk, ad.resource_fork_length - at)));
    if (!piece) return piece.error();
    if (piece->empty()) break;
    if (NtStatus s = vfs::write_stream_at(fd, key, at, *piece, max_resource_fork_bytes()); s != NtStatus::Success)
      return s;
    at += piece->size();
  }
  return NtStatus::Success;
}

bool zero(ByteSpan b) { return std::all_of(b.begin(), b.end(), [](uint8_t c) { return c == 0; }); }

bool has_content(const AppleDouble& ad) {
  return !ad.attributes.empty() || ad.resource_fork_length != 0 || (ad.finder_info && !zero(*ad.finder_info));
}

// Everything the "._" file holds, into `fd`'s streams.
NtStatus move_into_streams(Request& req, int ad_fd, const AppleDouble& ad, int fd) {
  for (const auto& a : ad.attributes) {
    std::string name = stream_name_of_attribute(a.name);
    if (name.empty()) continue;  // no stream can be named so
    if (NtStatus s = replace_stream(fd, name, a.value, vfs::max_stream_bytes()); s != NtStatus::Success) return s;
  }
  if (ad.finder_info && !zero(*ad.finder_info)) {
    const Bytes info = afp_info_with(ByteSpan(ad.finder_info->data(), ad.finder_info->size()));
    if (NtStatus s = replace_stream(fd, kAfpInfoStream, info, kAfpInfoBytes); s != NtStatus::Success) return s;
  }
  if (ad.resource_fork_length == 0) return NtStatus::Success;
  if (req.tree->share.fruit.wipe_intentionally_left_blank_rfork &&
      ad.resource_fork_length == kAdBlankResourceForkBytes) {
    auto fork = pread_exact(ad_fd, ad.resource_fork_offset, kAdBlankResourceForkBytes);
    if (fork && blank_resource_fork(*fork)) return NtStatus::Success;
  }
  return move_resource_fork(ad_fd, ad, fd);
}

// The "._" file once its content is in streams: emptied, or removed.
void retire_appledouble(Request& req, int dir_fd, const std::string& ad_name, int ad_fd, const AppleDouble& ad) {
  if (req.tree->share.fruit.delete_empty_adfiles) {
    if (unlinkat(dir_fd, ad_name.c_str(), 0) != 0)
      LOG_DEBUG("fruit: removing converted %s: %s", ad_name.c_str(), strerror(errno));
    return;
  }
  Bytes empty = converted_appledouble(ad.from_macos);
  if (vfs::pwrite_all(ad_fd, 0, empty) != NtStatus::Success || ftruncate(ad_fd, off_t(empty.size())) != 0)
    LOG_DEBUG("fruit: emptying converted %s: %s", ad_name.c_str(), strerror(errno));
}

}  // namespace

bool is_appledouble_name(std::string_view leaf) { return leaf.size() > 2 && leaf.starts_with("._"); }

void convert_appledouble(Request& req, int dir_fd, std::string_view leaf, int fd, const vfs::FileStat& st) {
  if (!fruit_share(req) || leaf.empty() || is_appledouble_name(leaf) || !req.tree->streams) return;
  const std::string ad_name = "._" + std::string(leaf);
  state::UniqueFd ad_fd(openat(dir_fd, ad_name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!ad_fd) return;  // none (the usual case), or not the user's to change
  struct stat ad_st;
  if (fstat(ad_fd.get(), &ad_st) != 0 || !S_ISREG(ad_st.st_mode)) return;
  auto head = pread_exact(ad_fd.get(), 0, std::min<size_t>(size_t(ad_st.st_size), kAdMaxHeaderBytes));
  if (!head) return;
  auto ad = parse_appledouble(*head, uint64_t(ad_st.st_size));
  if (!ad) return;
  if (!has_content(*ad)) {  // converted already (or never held anything)
    if (req.tree->share.fruit.delete_empty_adfiles) unlinkat(dir_fd, ad_name.c_str(), 0);
    return;
  }
  // The streams are the file's data: the user must be allowed to write it.
  if (check_stream_writable(req, fd, st) != NtStatus::Success) return;
  if (NtStatus s = move_into_streams(req, ad_fd.get(), *ad, fd); s != NtStatus::Success) {
    LOG_DEBUG("fruit: converting %s: status 0x%08x", ad_name.c_str(), unsigned(s));
    return;
  }
  retire_appledouble(req, dir_fd, ad_name, ad_fd.get(), *ad);
}

}  // namespace ringsmb::smb2::fruit
