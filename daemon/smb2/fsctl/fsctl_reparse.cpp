// FSCTL_GET_REPARSE_POINT (MS-FSCC 2.3.31, 2.1.2.4; MS-FSA 2.1.5.10.20)
// and the reparse buffers of symbolic links (fsctl_reparse.hpp). A
// symbolic link in the share is a Linux symlink; opened with
// FILE_OPEN_REPARSE_POINT (CREATE then holds the link itself, O_PATH) it
// reads back as a Symbolic Link Reparse Data Buffer. Every other file is
// not a reparse point. SET and DELETE: fsctl_symlink.cpp.
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

constexpr uint32_t SYMLINK_FLAG_RELATIVE = 0x1;
constexpr size_t kReparseHeaderSize = 8;     // ReparseTag, ReparseDataLength, Reserved
constexpr size_t kSymlinkFixedSize = 12;     // name offsets and lengths, Flags
constexpr size_t kMaxTargetBytes = 4095;     // PATH_MAX less the NUL
constexpr uint32_t kLxSymlinkVersion = 2;
constexpr uint32_t kSymlinkErrorTag = 0x4C4D5953;  // "SYML" (MS-SMB2 2.2.2.2.1)
constexpr uint32_t SMB2_ERROR_ID_DEFAULT = 0;
constexpr uint16_t kDialect311 = 0x0311;

Result<std::string> checked_target(std::string target) {
  if (target.empty() || target.size() > kMaxTargetBytes || target.find('\0') != std::string::npos)
    return Unexpected(NtStatus::IoReparseDataInvalid);
  return target;
}

Result<std::string> utf16_target(ByteSpan name) {
  std::string utf8;
  if (name.size() % 2 || !vfs::utf16le_to_utf8(name, utf8)) return Unexpected(NtStatus::IoReparseDataInvalid);
  return utf8;
}

// MS-FSCC 2.1.2.4: the SubstituteName is the target; PrintName is for show.
Result<std::string> windows_symlink_target(ByteSpan data) {
  ByteReader r(data);
  const uint16_t sub_offset = r.u16(), sub_length = r.u16();
  r.skip(4);  // PrintNameOffset, PrintNameLength
  const uint32_t flags = r.u32();
  if (!r.ok()) return Unexpected(NtStatus::IoReparseDataInvalid);
  ByteSpan paths = data.subspan(kSymlinkFixedSize);
  if (size_t(sub_offset) + sub_length > paths.size()) return Unexpected(NtStatus::IoReparseDataInvalid);
  auto name = utf16_target(paths.subspan(sub_offset, sub_length));
  if (!name) return name;
  std::string& target = *name;
  // "\??\C:\dir" names a disk of the client, which the server cannot reach.
  if (!(flags & SYMLINK_FLAG_RELATIVE) && target.starts_with("\\??\\")) return Unexpected(NtStatus::NotSupported);
  std::replace(target.begin(), target.end(), '\\', '/');
  // The Linux client writes an absolute target ("/etc/passwd") as an
  // absolute symlink whose SubstituteName lost its leading separator.
  if (!(flags & SYMLINK_FLAG_RELATIVE) && !target.starts_with('/')) {
    std::string rooted(1, '/');
    rooted.append(target);
    target = std::move(rooted);
  }
  return checked_target(std::move(target));
}

Result<std::string> nfs_symlink_target(ByteSpan data) {
  ByteReader r(data);
  const uint64_t type = r.u64();
  if (!r.ok()) return Unexpected(NtStatus::IoReparseDataInvalid);
  if (type != NFS_SPECFILE_LNK) return Unexpected(NtStatus::NotSupported);  // devices, FIFOs, sockets
  auto name = utf16_target(data.subspan(8));
  if (!name) return name;
  return checked_target(std::move(*name));
}

Result<std::string> wsl_symlink_target(ByteSpan data) {
  ByteReader r(data);
  if (r.u32() != kLxSymlinkVersion || !r.ok()) return Unexpected(NtStatus::IoReparseDataInvalid);
  ByteSpan name = data.subspan(4);
  return checked_target(std::string(name.begin(), name.end()));
}

}  // namespace

std::optional<Bytes> symlink_reparse_buffer(std::string_view target) {
  if (target.empty()) return std::nullopt;
  const bool relative = target.front() != '/';
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
  w.u32(relative ? SYMLINK_FLAG_RELATIVE : 0);
  w.bytes(name);  // SubstituteName
  w.bytes(name);  // PrintName
  return out;
}

Result<std::string> symlink_target_from_reparse(ByteSpan buffer) {
  ByteReader r(buffer);
  const uint32_t tag = r.u32();
  const uint16_t data_length = r.u16();
  if (!r.ok() || buffer.size() != kReparseHeaderSize + data_length) return Unexpected(NtStatus::IoReparseDataInvalid);
  ByteSpan data = buffer.subspan(kReparseHeaderSize);
  switch (tag) {
    case IO_REPARSE_TAG_SYMLINK: return windows_symlink_target(data);
    case IO_REPARSE_TAG_NFS: return nfs_symlink_target(data);
    case IO_REPARSE_TAG_LX_SYMLINK: return wsl_symlink_target(data);
    default: return Unexpected(NtStatus::NotSupported);
  }
}

Bytes symlink_error_body(std::string_view target, uint16_t unparsed_bytes, uint16_t dialect) {
  Bytes link = symlink_reparse_buffer(target).value_or(Bytes{});
  if (link.size() >= kReparseHeaderSize) store_le16(link.data() + 6, unparsed_bytes);  // Reserved -> UnparsedPathLength
  Bytes response;
  ByteWriter s(response);
  s.u32(uint32_t(4 + link.size()));  // SymLinkLength: what follows this field
  s.u32(kSymlinkErrorTag);
  s.bytes(link);
  const bool contexts = dialect == kDialect311;
  Bytes body;
  ByteWriter w(body);
  w.u16(9);                        // StructureSize
  w.u8(contexts ? 1 : 0);          // ErrorContextCount
  w.u8(0);                         // Reserved
  w.u32(uint32_t(response.size() + (contexts ? 8 : 0)));  // ByteCount
  if (contexts) {
    w.u32(uint32_t(response.size()));  // ErrorDataLength
    w.u32(SMB2_ERROR_ID_DEFAULT);      // ErrorId
  }
  w.bytes(response);
  return body;
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
