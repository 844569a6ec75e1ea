// "store dos attributes = yes": the DOS attributes the mode bits cannot
// express (HIDDEN, SYSTEM, ARCHIVE) live in the extended attribute
// user.DOSATTRIB, as in Samba. The value is written in the text form Samba
// also reads ("0x22" and a NUL); from a value Samba wrote (that text, then
// an NDR blob) the leading number is read. READONLY stays in the mode bits
// and DIRECTORY in the file type; SPARSE_FILE is kept on every share, with
// the times Linux cannot set (vfs/file_meta.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ringsmb::vfs {

inline constexpr const char* kDosAttribXattr = "user.DOSATTRIB";
inline constexpr uint32_t kStoredDosAttributes = 0x2 | 0x4 | 0x20;  // HIDDEN | SYSTEM | ARCHIVE

// The stored attributes of the file open as `fd` (an O_PATH fd works);
// nullopt when there is no (readable) value.
std::optional<uint32_t> read_dos_xattr(int fd);
// ... of `name` inside the directory `dirfd`, without following a symlink.
std::optional<uint32_t> read_dos_xattr_at(int dirfd, std::string_view name);
// Stores attrs & kStoredDosAttributes; 0 or an errno.
int write_dos_xattr(int fd, uint32_t attrs);

// Parses a user.DOSATTRIB value; nullopt when it does not start with a
// number.
std::optional<uint32_t> parse_dos_xattr(std::string_view value);

// The attributes to report: `from_mode` (vfs::dos_attributes) with SYSTEM
// and ARCHIVE taken from `stored`, and HIDDEN when either says so (a dot
// file stays hidden under "hide dot files"), and a directory's READONLY
// from `stored`. NORMAL only when nothing else is set.
uint32_t merge_dos_attributes(uint32_t from_mode, uint32_t stored);

}  // namespace ringsmb::vfs
