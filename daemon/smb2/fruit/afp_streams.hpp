// How the two streams macOS keeps Mac metadata in (smb2/fruit/afp_info.hpp:
// AFP_AfpInfo, AFP_Resource) behave on a fruit share: listings, opens,
// READ, WRITE and EndOfFile of AFP_AfpInfo, deletes of the resource fork.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/fruit/afp_info.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {

// How macOS (and Samba's fruit) treat the two streams, where the stream
// store alone would treat them as any other:
//
//  - An empty AFP_AfpInfo or AFP_Resource does not exist: it is left out of
//    stream listings, removed when an open of it closes, and an empty
//    AFP_Resource is not found by FILE_OPEN.
//  - AFP_AfpInfo is always 60 bytes: a read starts at 0 whatever the
//    offset (nothing from 61 on); one not written yet reads as a blank
//    AfpInfo; a write must start with "AFP" (3 bytes or more; 60 or more
//    past offset 0), writes the first 60 bytes at 0, and a FinderInfo of
//    zeros empties the stream, which then goes at close; EndOfFile past 60
//    is STATUS_ALLOTTED_SPACE_EXCEEDED, and any other size changes nothing.
//    An open of it reports 60 bytes. One of another size (written through
//    a share without fruit) is invalid: a listing removes it.
//  - With fruit:resource = file (the resource fork is a file to macOS,
//    Samba keeps it in the AppleDouble file), a delete of a non-empty
//    AFP_Resource stream is ignored, as on a Mac; the fork goes with its
//    file. Resource forks are bounded by max_resource_fork_bytes(), not
//    by "max stream size" alone.
//  - Once AAPL is negotiated on the connection, any empty named stream is
//    left out of listings and not found by FILE_OPEN, as Samba does.

// Drops from the listing of a fruit share's file (open as `fd`) the streams
// that do not exist for macOS, and removes an invalid AFP_AfpInfo.
void filter_stream_list(const Request& req, int fd, std::vector<vfs::StreamEntry>& streams);
// Whether an existing stream of `size` bytes named `stream_name` counts as
// absent when opened.
bool afp_absent(const Request& req, std::string_view stream_name, uint64_t size);
// Whether FILE_OPEN of an existing stream of `size` bytes is answered
// STATUS_OBJECT_NAME_NOT_FOUND (an empty stream once AAPL is negotiated).
bool empty_stream_hidden(const Request& req, uint64_t size);
// Whether a delete of this open's stream leaves it be (see above).
bool keeps_resource_fork(const Request& req, std::string_view stream_name);
// READ of AFP_AfpInfo: up to `length` bytes of it.
Result<Bytes> read_afp_info(int fd, uint64_t offset, uint32_t length);
// WRITE of AFP_AfpInfo through `open`.
NtStatus write_afp_info(const state::Open& open, uint64_t offset, ByteSpan data);
// EndOfFile of AFP_AfpInfo.
NtStatus set_afp_info_eof(uint64_t eof);

}  // namespace ringsmb::smb2::fruit
