// Named data streams ("file:name:$DATA", MS-FSCC 2.1.5.3), stored beside
// the file as extended attributes in the trusted.* namespace:
//
//   trusted.ringsmb.stream.<folded name>  =  "RSS1" | u16 name length |
//                                            name (UTF-8, as created) | data
//
// trusted.* is readable and writable only with CAP_SYS_ADMIN, so neither a
// local user (setfattr) nor an SMB client through some other path can read
// or forge a stream; the kernel checks no file permission for it either,
// which is why the SMB2 layer opens the file itself with the user's
// identity before touching its streams. Stream names compare without case
// (as on NTFS): the key holds the folded name, the value the name as the
// client spelled it at creation, for listings.
//
// A stream that does not fit one xattr value (ext4: one block, about 4 KiB
// without the ea_inode feature, shared with the file's other attributes;
// XFS, btrfs, tmpfs: 64 KiB; never more than the VFS's XATTR_SIZE_MAX)
// moves to a sidecar file (vfs/stream_sidecar.hpp) and the value becomes
//
//   "RSS2" | u16 name length | name (UTF-8) | sidecar id (16 bytes)
//
// Without sidecars configured, a write past the value's limit fails with
// STATUS_DISK_FULL and changes nothing: a stream is never silently
// truncated.
//
// No stream grows past max_stream_bytes() ("max stream size"): a WRITE
// or a size beyond it is STATUS_DISK_FULL, so no single request makes a
// stream that one request could not copy in bounded time.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

inline constexpr std::string_view kStreamXattrPrefix = "trusted.ringsmb.stream.";
// The VFS bound on one xattr value (XATTR_SIZE_MAX), and so on a stream's
// header plus data.
inline constexpr size_t kMaxStreamValueBytes = 65536;

// The most bytes one stream may hold (default 64 MiB); set once at start.
inline constexpr uint64_t kDefaultMaxStreamBytes = 64ull << 20;
void set_max_stream_bytes(uint64_t bytes);
uint64_t max_stream_bytes();

// The strict stream-name check and the key derived from it: `name` is what
// parse_smb_path reported as the stream (UTF-8). Refuses (ObjectNameInvalid)
// an empty name, NUL, '/', '\\', ':', invalid UTF-8 and names over 255 UTF-16
// code units; a name whose key would not fit Linux's 255-byte xattr names
// is NameTooLong (legal on Windows, unstorable here). The key is
// kStreamXattrPrefix + fold_case(name).
Result<std::string> stream_xattr_name(std::string_view name);

struct StreamEntry {
  std::string name;  // as created
  uint64_t size = 0;
};

// All operations take an fd of the file (or directory) that carries the
// streams; an O_PATH fd works too (through /proc/self/fd). They run with
// whatever identity the thread has: the caller checks the user's rights.

// The stream's data size; ObjectNameNotFound when there is no such stream.
Result<uint64_t> stream_size(int fd, const std::string& key);
// Its name as created (which any spelling of it opens) and size.
Result<StreamEntry> stream_entry(int fd, const std::string& key);
// The stream's whole data (InsufficientResources past kMaxWholeStreamBytes).
inline constexpr uint64_t kMaxWholeStreamBytes = 64ull << 20;
Result<Bytes> read_stream(int fd, const std::string& key);
// Up to `length` bytes of the stream from `offset` (fewer at its end).
Result<Bytes> read_stream_range(int fd, const std::string& key, uint64_t offset, size_t length);
// Creates an empty stream named `name`; ObjectNameCollision if it exists.
NtStatus create_stream(int fd, const std::string& key, std::string_view name);
// Writes `data` at `offset` (zero-filling a gap), or sets the size to
// `offset` (truncate or extend). The read-modify-write of an inline stream
// runs under a lock per (fd's file, key) so concurrent writers on other
// workers do not lose updates; past what one value holds the stream moves
// to a sidecar (DiskFull when there are none; nothing changes then), which
// belongs to the file's owner. DiskFull past max_stream_bytes() and past
// the owner's sidecar bound (vfs/stream_sidecar.hpp); a caller may give
// another bound than max_stream_bytes() for a stream of its own kind.
NtStatus write_stream_at(int fd, const std::string& key, uint64_t offset, ByteSpan data,
                         uint64_t limit_bytes = max_stream_bytes());
NtStatus set_stream_size(int fd, const std::string& key, uint64_t size, uint64_t limit_bytes = max_stream_bytes());
// Removes the stream (and its sidecar); ObjectNameNotFound if it is not there.
NtStatus remove_stream(int fd, const std::string& key);
// Renames stream `from` to `to_name` (key `to_key`). With `replace`, an
// existing empty target is replaced; a target holding data is
// InvalidParameter and, without `replace`, any target ObjectNameCollision
// (MS-FSA 2.1.5.14.11).
NtStatus rename_stream(int fd, const std::string& from, const std::string& to_key, std::string_view to_name,
                       bool replace);
// The named streams, in no particular order.
Result<std::vector<StreamEntry>> list_streams(int fd);
// Removes every named stream and their sidecars (overwrite or supersede
// of the file, MS-FSA 2.1.5.1.2.2; the file's last link deleted). Cheap
// when there are none: one listxattr.
NtStatus remove_all_streams(int fd);
// The file open as `fd` lost its last link: removes the sidecars of its
// streams (the attributes go with the inode). Costs nothing unless
// sidecars are in use (stream_sidecars_in_use).
void forget_deleted_streams(int fd);

// Can streams be stored on the filesystem of `dir_fd` by this process
// (CAP_SYS_ADMIN for trusted.*, and a filesystem that has the namespace)?
// Probes without changing anything.
bool streams_supported(int dir_fd);

// Encodes FILE_STREAM_INFORMATION (MS-FSCC 2.4.43): the unnamed stream
// "::$DATA" first (files only; `unnamed_size`, `unnamed_allocation`), then
// each named stream as ":name:$DATA".
void encode_stream_information(bool is_directory, uint64_t unnamed_size, uint64_t unnamed_allocation,
                               const std::vector<StreamEntry>& streams, Bytes& out);

// What a stream's allocation is reported as: its size rounded up to 4 KiB.
inline uint64_t stream_allocation(uint64_t size) { return (size + 4095) / 4096 * 4096; }

}  // namespace ringsmb::vfs
