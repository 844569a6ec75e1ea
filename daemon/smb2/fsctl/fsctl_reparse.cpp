// FSCTL_GET_REPARSE_POINT (MS-FSCC 2.3.31, 2.1.2.4; MS-FSA 2.1.5.10.20):
// a symbolic link inside the share, opened with FILE_OPEN_REPARSE_POINT
// (CREATE then holds the link itself, O_PATH), reads back as a Symbolic
// Link Reparse Data Buffer. Only a relative target is reported (with '\'
// separators and SYMLINK_FLAG_RELATIVE): an absolute one names a path of
// the server, which means nothing to the client and would disclose the
// server's layout. Every other file is not a reparse point.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "smb2/fsctl/fsctl.hpp"
#include "smb2/fsctl/fsctl_reparse.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint32_t IO_REPARSE_TAG_SYMLINK = 0xA000000C;
constexpr uint32_t SYMLINK_FLAG_RELATIVE = 0x1;
constexpr size_t kSymlinkFixedSize = 12;     // name offsets and lengths, Flags

}  // namespace

std::optional<Bytes> symlink_reparse_buffer(std::string_view target) {
  if (target.empty() || target.front() == '/') return std::nullopt;
  std::string windows(target);
  std::replace(windows.begin(), windows.end(), '/', '\\');
  Bytes name = vfs::utf8_to_utf16le(windows);
  if (name.size() * 2 + kSymlinkFixedSize > 0xFFFF) return std::nullopt;
  Bytes out;
  ByteWriter w(out);
  w.u32(IO_REPARSE_TAG_SYMLINK);
  w.u16(uint16_t(kSymlinkFixedSize + 2 * name.size()));  // ReparseDataLength
  w.u16(0);                                               // Reserved
  w.u16(0);                                               // SubstituteNameOffset
  w.u16(uint16_t(name.size()));                           // SubstituteNameLength
  w.u16(uint16_t(name.size()));                           // PrintNameOffset
  w.u16(uint16_t(name.size()));                           // PrintNameLength
  w.u32(SYMLINK_FLAG_RELATIVE);
  w.bytes(name);  // SubstituteName
  w.bytes(name);  // PrintName
  return out;
}

NtStatus fsctl_get_reparse_point(FsctlCall& call) {
  int fd = call.open->fd.get();
  struct stat st;
  if (fstat(fd, &st) != 0) return nt_status_from_errno(errno);
  if (!S_ISLNK(st.st_mode)) return NtStatus::NotAReparsePoint;
  std::string target(size_t(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
  ssize_t n = readlinkat(fd, "", target.data(), target.size());
  if (n < 0) return nt_status_from_errno(errno);
  target.resize(size_t(n));
  auto buffer = symlink_reparse_buffer(target);
  if (!buffer) return NtStatus::NotAReparsePoint;
  if (buffer->size() > call.q.max_output_response) return NtStatus::BufferTooSmall;
  call.out = std::move(*buffer);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
