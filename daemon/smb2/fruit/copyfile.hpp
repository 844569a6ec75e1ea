// macOS copyfile (AAPL's SUPPORTS_OSX_COPYFILE): an FSCTL_SRV_COPYCHUNK with
// no chunks, after the connection's AAPL query turned copyfile on, copies
// the whole source file into the target: its data and every named stream
// (Finder info, resource fork, tags). Without AAPL, a copy of no chunks
// copies nothing, as on Windows.
#pragma once

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2::fruit {

// The largest file copied this way: the copy runs on the worker thread, so
// it is bounded like any COPYCHUNK request (kMaxDataSize); a larger source
// is STATUS_NOT_SUPPORTED, and macOS then copies through the client.
inline constexpr uint64_t kMaxCopyfileBytes = 16 * 1024 * 1024;

// Whether a COPYCHUNK of `chunk_count` chunks is a copyfile request.
bool is_copyfile(const Request& req, uint32_t chunk_count, const state::Open& src, const state::Open& dst);

// Copies `src` (data and streams) into `dst` (both files, not streams,
// access already checked) and writes the SRV_COPYCHUNK_RESPONSE to `out`:
// 0 chunks, 0 chunk bytes, the data's size as TotalBytesWritten.
NtStatus copyfile(const state::Open& src, state::Open& dst, Bytes& out);

}  // namespace ringsmb::smb2::fruit
