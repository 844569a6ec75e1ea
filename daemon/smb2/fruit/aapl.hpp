// Apple's SMB2 extensions as macOS clients use them (no Microsoft document
// describes them; Samba's vfs_fruit and smbtorture's vfs.fruit tests are the
// reference): a CREATE carrying an "AAPL" context (the server query) asks
// what the server offers and turns the offered extensions on for the whole
// connection. Only on shares with fruit on (config::FruitOptions, "vfs
// objects = fruit"); elsewhere nothing here runs.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "vfs/dir_entries.hpp"

namespace ringsmb::smb2::fruit {

// The AAPL context's command and bits (request: CommandCode, Reserved,
// RequestBitmap, ClientCapabilities; 24 bytes).
inline constexpr uint32_t kAaplServerQuery = 1;
inline constexpr uint64_t kAaplServerCaps = 1, kAaplVolumeCaps = 2, kAaplModelInfo = 4;
inline constexpr uint64_t kAaplSupportsReadDirAttr = 1, kAaplSupportsOsxCopyfile = 2, kAaplUnixBased = 4,
                          kAaplSupportsNfsAce = 8;
inline constexpr uint64_t kAaplCaseSensitive = 2, kAaplFullSync = 4;
inline constexpr size_t kAaplQueryBytes = 24;

// Appends the answer to the AAPL server query `query` (the request context's
// data) to the response contexts `out`, and records on the connection what
// it turned on. Every valid query is answered, as Samba does (a client
// may ask again on the same connection); a query of another command or
// size is ignored.
void answer_aapl(Request& req, ByteSpan query, Bytes& out);

// Whether a directory with open files below it may be renamed (POSIX's
// rename, as macOS expects): fruit:posix_rename once AAPL is negotiated.
bool posix_rename(const Request& req);

// The on-disk file id to report (QFid, directory listings): 0 once AAPL is
// negotiated on a share with fruit:zero_file_id, as Samba does (macOS then
// does not rely on ids that Linux may reuse); `id` otherwise.
uint64_t reported_file_id(const Request& req, uint64_t id);

// After AAPL turned READDIR_ATTR on: rewrites the FILE_ID_BOTH_DIR_INFORMATION
// entry `entry` (MS-FSCC 2.4.17, already encoded for `e`) the way macOS reads
// it: EaSize holds the maximal access, the short name's 24 bytes the
// resource fork's size and the compressed FinderInfo, Reserved2 the UNIX
// mode (with fruit:nfs_aces). `dir_fd` is the listed directory.
void fill_readdir_attr(Request& req, int dir_fd, const vfs::DirEntry& e, uint8_t* entry);

}  // namespace ringsmb::smb2::fruit
