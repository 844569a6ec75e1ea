// fruit:metadata = netatalk: the Finder info Netatalk (the AFP server)
// keeps in the extended attribute user.org.netatalk.Metadata, an
// AppleDouble header (smb2/fruit/appledouble.hpp), so that a share both
// serve shows Macs the same Finder info through either.
//
// Where a file has that attribute, it is the authority: before the
// AFP_AfpInfo stream is opened or listed, the stream is made to hold the
// attribute's Finder info (removed when that is all zeros); a WRITE of
// AFP_AfpInfo, and its deletion, go to the attribute too. A file without
// it keeps AFP_AfpInfo in the stream store alone: ringsmb does not add
// Netatalk's attribute to files Netatalk has not seen.
#pragma once

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2::fruit {

inline constexpr char kNetatalkMetadataXattr[] = "user.org.netatalk.Metadata";

// Whether the share keeps Finder info with Netatalk (fruit:metadata = netatalk).
bool netatalk_metadata(const Request& req);

// Brings the Finder info of `fd`'s Netatalk attribute into its AFP_AfpInfo stream.
void import_netatalk_metadata(int fd);

// fruit:locking = netatalk: Netatalk announces each open of a file, and
// the opens it denies, as a one-byte lock at an offset of its own near
// 2^63 (AD_FILELOCK_*: open for writing, for reading, denying writes,
// denying reads, and the same for the resource fork). A CREATE of an
// existing file (not a stream, not a directory) is refused with
// STATUS_SHARING_VIOLATION where those locks say Netatalk's open and this
// one exclude each other, as its share modes would: locks Netatalk holds
// on the file (fcntl) and byte-range locks SMB clients took there count.
// ringsmb does not take such locks for its own opens.
NtStatus check_netatalk_locks(Request& req, int fd, const vfs::FileStat& st, uint32_t access, uint32_t share_access);

// Puts the Finder info of the 60-byte AfpInfo `afp_info` (zeros: none) into
// `fd`'s Netatalk attribute, where it has one.
void export_netatalk_metadata(int fd, ByteSpan afp_info);

}  // namespace ringsmb::smb2::fruit
