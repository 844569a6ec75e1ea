// What Windows keeps about a file that Linux cannot: a CreationTime set by a
// client (Linux has no call that sets the birth time), a ChangeTime set by a
// client (the kernel owns ctime), and FILE_ATTRIBUTE_SPARSE_FILE (every
// Linux file may have holes; the flag is what FSCTL_SET_SPARSE set). Kept
// in one extended attribute, trusted.ringsmb.meta, which only a process
// with CAP_SYS_ADMIN can read or write: not a file's owner, not an SMB
// client through any other path. ringsmbd keeps CAP_SYS_ADMIN while it
// switches its fsuid to the user (setfsuid clears only the filesystem
// capabilities), so the xattr is read and written with the user's identity
// and no switch back to root.
//
// It also holds, on shares without "store dos attributes", the DOS
// attributes the mode bits cannot express (HIDDEN, SYSTEM, READONLY on a
// directory, and ARCHIVE cleared on a file or set on a directory), and only when they differ from
// what the mode implies (vfs::dos_attributes): a file whose attributes were
// never set, or set back to the default, has none.
//
// Nothing is stored for a file whose times are what statx reports, that is
// not marked sparse and whose attributes are the default: a new file costs
// no xattr write.
//
// A ChangeTime set by a client holds until the file changes again: it is
// stored with a deadline a little after the moment it was set
// (kChangeTimeGraceNs), and reported only while the file's real ctime is not
// later (the xattr write itself moves the ctime, so the ctime cannot be
// recorded exactly). A change within that grace period after the set is not
// seen in ChangeTime.
//
// Value (32 bytes, little-endian): Version (1), Flags (1: CreationTime,
// 2: ChangeTime, 4: sparse, 8: DOS attributes), 2 reserved bytes, the DOS
// attributes (u32: HIDDEN, SYSTEM, ARCHIVE), CreationTime, ChangeTime,
// ChangeTimeValidUntil (FILETIMEs). Another version or size is ignored; a
// reader that knew only flags 1-4 ignores the attributes (the bytes were
// reserved and zero).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/bytes.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::vfs {

inline constexpr const char* kFileMetaXattr = "trusted.ringsmb.meta";
inline constexpr size_t kFileMetaSize = 32;
inline constexpr uint64_t kChangeTimeGraceNs = 100'000'000;  // 100 ms

struct FileMeta {
  std::optional<uint64_t> creation_time;  // FILETIME
  std::optional<uint64_t> change_time;    // FILETIME, reported while ...
  uint64_t change_valid_until = 0;        // ... the ctime (FILETIME) is not later than this
  bool sparse = false;
  // HIDDEN | SYSTEM | ARCHIVE as set by a client, when that differs from
  // what the mode implies (see kMetaDosAttributes).
  std::optional<uint32_t> dos_attributes;
  bool empty() const { return !creation_time && !change_time && !sparse && !dos_attributes; }
};

// The attributes the meta can hold; READONLY only for a directory (a
// file's READONLY is its mode's missing write bit, vfs::dos_attributes).
inline constexpr uint32_t kMetaDosAttributes =
    FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY;

// What `meta.dos_attributes` becomes when a client sets `requested`
// (FileAttributes of CREATE or FileBasicInformation, not 0) on a file whose
// mode-derived attributes are `from_mode`: nullopt when the mode implies
// them already.
std::optional<uint32_t> dos_attributes_to_keep(uint32_t requested, uint32_t from_mode);

// The xattr's value: a fixed size, so no heap buffer.
using FileMetaValue = std::array<uint8_t, kFileMetaSize>;
FileMetaValue encode_file_meta(const FileMeta& meta);
std::optional<FileMeta> parse_file_meta(ByteSpan value);

// The metadata of the file open as `fd` (an O_PATH fd works); an empty
// FileMeta when there is none or it cannot be read. `none`, when given, is
// set when the file has no such xattr or its filesystem none at all
// (ENODATA, ENOTSUP): nothing but a write can change that.
FileMeta read_file_meta(int fd, bool* none = nullptr);
// ... of `name` inside the directory `dirfd`, without following a symlink.
FileMeta read_file_meta_at(int dirfd, std::string_view name);
// Stores `meta` (removes the xattr when it is empty); 0 or an errno.
int write_file_meta(int fd, const FileMeta& meta);

// Applies `meta` to what statx said: CreationTime, ChangeTime (while valid),
// the stored DOS attributes (merge_dos_attributes) and
// FILE_ATTRIBUTE_SPARSE_FILE for a file (st.attributes must already be the
// reported DOS attributes).
void apply_file_meta(const FileMeta& meta, FileStat& st);

// The FILETIME of CLOCK_REALTIME now.
uint64_t filetime_now();

}  // namespace ringsmb::vfs
