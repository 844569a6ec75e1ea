#include "vfs/file_meta.hpp"

#include <sys/xattr.h>

#include <cerrno>
#include <ctime>
#include <string>

#include "vfs/dos_xattr.hpp"

namespace ringsmb::vfs {
namespace {

constexpr uint8_t kVersion = 1;
enum : uint8_t { kHasCreation = 1, kHasChange = 2, kSparse = 4, kHasDosAttributes = 8 };

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

FileMeta from_buffer(const uint8_t* buf, ssize_t n) {
  if (n != ssize_t(kFileMetaSize)) return {};
  return parse_file_meta(ByteSpan(buf, size_t(n))).value_or(FileMeta{});
}

}  // namespace

FileMetaValue encode_file_meta(const FileMeta& meta) {
  FileMetaValue out{};  // the reserved bytes 2-3 stay zero
  out[0] = kVersion;
  out[1] = uint8_t((meta.creation_time ? kHasCreation : 0) | (meta.change_time ? kHasChange : 0) |
                   (meta.sparse ? kSparse : 0) | (meta.dos_attributes ? kHasDosAttributes : 0));
  store_le32(&out[4], meta.dos_attributes.value_or(0) & kMetaDosAttributes);
  store_le64(&out[8], meta.creation_time.value_or(0));
  store_le64(&out[16], meta.change_time.value_or(0));
  store_le64(&out[24], meta.change_time ? meta.change_valid_until : 0);
  return out;
}

std::optional<FileMeta> parse_file_meta(ByteSpan value) {
  if (value.size() != kFileMetaSize || value[0] != kVersion) return std::nullopt;
  ByteReader r(value);
  r.skip(1);
  uint8_t flags = r.u8();
  r.skip(2);
  uint32_t dos = r.u32();
  uint64_t creation = r.u64(), change = r.u64(), valid_until = r.u64();
  FileMeta meta;
  if (flags & kHasCreation) meta.creation_time = creation;
  if (flags & kHasChange) {
    meta.change_time = change;
    meta.change_valid_until = valid_until;
  }
  meta.sparse = flags & kSparse;
  if (flags & kHasDosAttributes) meta.dos_attributes = dos & kMetaDosAttributes;
  return meta;
}

FileMeta read_file_meta(int fd, bool* none) {
  uint8_t buf[kFileMetaSize + 1];
  ssize_t n = fgetxattr(fd, kFileMetaXattr, buf, sizeof buf);
  if (n < 0 && errno == EBADF) n = getxattr(proc_fd_path(fd).c_str(), kFileMetaXattr, buf, sizeof buf);  // O_PATH
  if (none) *none = n < 0 && (errno == ENODATA || errno == ENOTSUP);
  return from_buffer(buf, n);
}

FileMeta read_file_meta_at(int dirfd, std::string_view name) {
  uint8_t buf[kFileMetaSize + 1];
  std::string path = proc_fd_path(dirfd) + "/" + std::string(name);
  return from_buffer(buf, lgetxattr(path.c_str(), kFileMetaXattr, buf, sizeof buf));
}

int write_file_meta(int fd, const FileMeta& meta) {
  if (meta.empty()) {
    if (fremovexattr(fd, kFileMetaXattr) == 0 || errno == ENODATA) return 0;
    if (errno != EBADF) return errno;
    if (removexattr(proc_fd_path(fd).c_str(), kFileMetaXattr) == 0 || errno == ENODATA) return 0;
    return errno;
  }
  const FileMetaValue value = encode_file_meta(meta);
  if (fsetxattr(fd, kFileMetaXattr, value.data(), value.size(), 0) == 0) return 0;
  if (errno != EBADF) return errno;
  if (setxattr(proc_fd_path(fd).c_str(), kFileMetaXattr, value.data(), value.size(), 0) == 0) return 0;
  return errno;
}

std::optional<uint32_t> dos_attributes_to_keep(uint32_t requested, uint32_t from_mode) {
  const bool directory = from_mode & FILE_ATTRIBUTE_DIRECTORY;
  const uint32_t kept = directory ? kMetaDosAttributes : kMetaDosAttributes & ~uint32_t(FILE_ATTRIBUTE_READONLY);
  uint32_t want = requested & kept;
  if (want == (from_mode & kept)) return std::nullopt;
  return want;
}

void apply_file_meta(const FileMeta& meta, FileStat& st) {
  if (meta.dos_attributes) st.attributes = merge_dos_attributes(st.attributes, *meta.dos_attributes);
  if (meta.creation_time) st.creation_time = *meta.creation_time;
  if (meta.change_time && st.change_time <= meta.change_valid_until) st.change_time = *meta.change_time;
  if (meta.sparse && !st.is_directory) {
    if (st.attributes == FILE_ATTRIBUTE_NORMAL) st.attributes = 0;
    st.attributes |= FILE_ATTRIBUTE_SPARSE_FILE;
  }
}

uint64_t filetime_now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return unix_to_filetime(ts.tv_sec, uint32_t(ts.tv_nsec));
}

}  // namespace ringsmb::vfs
