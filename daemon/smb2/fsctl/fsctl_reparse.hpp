// Symbolic links as reparse points: the buffers of FSCTL_GET/SET_REPARSE_POINT
// (MS-FSCC 2.1.2.1, 2.1.2.4; the NFS and WSL forms the Linux kernel client
// sends) and the Symbolic Link Error Response of a CREATE that meets one
// (MS-SMB2 2.2.2.2.1). The FSCTL handlers (fsctl_reparse.cpp) and CREATE
// (smb2/commands/create.cpp) use them; the unit tests check the bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

using vfs::IO_REPARSE_TAG_SYMLINK;  // MS-FSCC 2.1.2.1 (vfs/file_info.hpp)
inline constexpr uint32_t IO_REPARSE_TAG_NFS = 0x80000014;         // Windows' NFS server form
inline constexpr uint32_t IO_REPARSE_TAG_LX_SYMLINK = 0xA000001D;  // WSL
inline constexpr uint64_t NFS_SPECFILE_LNK = 0x00000000014B4E4C;   // "LNK"

// The Symbolic Link Reparse Data Buffer of a Linux symlink's target: a
// relative target with '\' separators and SYMLINK_FLAG_RELATIVE, an
// absolute one ("/srv/x") as "\srv\x" without the flag (what the Linux
// kernel client sends and reads back). nullopt for an empty target or one
// too long for the 16-bit lengths.
std::optional<Bytes> symlink_reparse_buffer(std::string_view target);

// The Linux symlink target a client's REPARSE_DATA_BUFFER asks for:
// IO_REPARSE_TAG_SYMLINK (relative, or a POSIX absolute "\x\y"),
// IO_REPARSE_TAG_NFS with NFS_SPECFILE_LNK, IO_REPARSE_TAG_LX_SYMLINK.
// IO_REPARSE_DATA_INVALID for a malformed buffer (lengths that disagree,
// an empty or NUL-holding target), NOT_SUPPORTED for other tags, other NFS
// file types and Windows drive paths ("\??\C:\x", which name the client's
// disks, not the server's).
Result<std::string> symlink_target_from_reparse(ByteSpan buffer);

// MS-SMB2 2.2.2 ERROR response body for STATUS_STOPPED_ON_SYMLINK: the
// Symbolic Link Error Response, in an error context for SMB 3.1.1 and as
// the bare ErrorData before it. `unparsed_bytes`: the bytes of the client's
// path after the symlink's component (0 when the link is the last one).
Bytes symlink_error_body(std::string_view target, uint16_t unparsed_bytes, uint16_t dialect);

}  // namespace ringsmb::smb2
