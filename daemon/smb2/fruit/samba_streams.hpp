// The streams Samba's vfs_streams_xattr keeps: one user.DosStream.NAME:$DATA
// attribute per stream, its value the data followed by one NUL byte, NAME
// as catia stored it (":" and the other characters NTFS forbids as
// themselves). A share moved from Samba with "vfs objects = catia fruit
// streams_xattr" has its Finder tags and other macOS streams there.
//
// On a fruit share, before a file's streams are listed, such attributes are
// moved into ringsmb's store (vfs/stream_store.hpp) under the names macOS
// sees (those characters as U+F001..U+F027, smb2/fruit/appledouble.hpp),
// unless ringsmb already has a stream of that name, and removed. The
// listing that finds none costs one listxattr.
#pragma once

namespace ringsmb::smb2::fruit {

inline constexpr char kSambaStreamPrefix[] = "user.DosStream.";

// Moves `fd`'s Samba streams into ringsmb's store.
void import_samba_streams(int fd);

}  // namespace ringsmb::smb2::fruit
