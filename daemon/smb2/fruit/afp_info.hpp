// The two streams macOS keeps Mac metadata in (smb2/fruit/): AFP_AfpInfo,
// 60 bytes holding the 32-byte FinderInfo, and AFP_Resource, the resource
// fork. Both live in the named-stream store (vfs/stream_store.hpp) like any
// other stream; this names their keys and the AfpInfo layout. What fruit
// does with them is smb2/fruit/afp_streams.hpp's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2::fruit {

inline constexpr std::string_view kAfpInfoStream = "AFP_AfpInfo";
inline constexpr std::string_view kAfpResourceStream = "AFP_Resource";

// AfpInfo (Apple's AFP_AfpInfo stream): Signature "AFP\0", Version
// 0x00010000, Reserved, BackupTime, FinderInfo[32], ProDOSInfo[6],
// Reserved[6]; big-endian, as on the Mac.
inline constexpr size_t kAfpInfoBytes = 60;
inline constexpr size_t kAfpFinderInfoAt = 16, kAfpFinderInfoBytes = 32;
inline constexpr uint32_t kAfpSignature = 0x41465000;  // "AFP\0"
inline constexpr uint32_t kAfpVersion = 0x00010000;

// The stream-store keys of the two streams (vfs::stream_xattr_name).
const std::string& afp_info_key();
const std::string& afp_resource_key();

// Whether `name` (a stream name, UTF-8, without ":$DATA") is one of them,
// compared as stream names are (without case).
bool is_afp_info(std::string_view name);
bool is_afp_resource(std::string_view name);

// An AfpInfo a Mac would accept: 60 bytes or more, the signature and version.
bool valid_afp_info(ByteSpan data);
// The 60-byte AfpInfo holding `finder_info` (32 bytes; empty: zeros).
Bytes afp_info_with(ByteSpan finder_info);

// state::StreamRef::afp: which AFP stream an open names.
inline constexpr uint8_t kAfpNone = 0, kAfpInfo = 1, kAfpResource = 2;
// kAfpInfo or kAfpResource for those names on a share with fruit on, else kAfpNone.
uint8_t afp_stream_of(const Request& req, std::string_view stream_name);

// The bound on a resource fork: "max stream size" or 1 GiB, whichever is
// more (Samba keeps forks in files; the per-user bound on sidecar space
// still applies).
uint64_t max_resource_fork_bytes();

}  // namespace ringsmb::smb2::fruit
