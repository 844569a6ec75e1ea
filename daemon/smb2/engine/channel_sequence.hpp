// Channel sequence verification (MS-SMB2 3.3.5.2.10) and the end of
// Open.IsReplayEligible (3.3.5.13 ff.: every request that uses an open).
//
// A client that loses a channel increments the session's ChannelSequence
// and replays what it had outstanding. Each open remembers the highest
// ChannelSequence seen (Open.ChannelSequence) and how many requests are
// outstanding with it (OutstandingRequestCount) and with older ones
// (OutstandingPreRequestCount). A WRITE, SET_INFO or IOCTL from an older
// channel (16-bit difference above 0x7FFF), or a replay of one while
// requests of an older channel are still outstanding, could overwrite a
// newer change: it fails with STATUS_FILE_NOT_AVAILABLE, which tells the
// client to replay it on the current channel. SMB 3.x only; a request
// that names no open is not counted.
#pragma once

#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// Before the handler runs: the checks above, and REQ's count taken
// (Request::channel). STATUS_FILE_NOT_AVAILABLE for a stale modifying
// request; otherwise Success.
NtStatus enter_channel_sequence(Request& req);
// The request counted in C has its final response: the count it took is
// given back (C is cleared). Nothing when the open is gone.
void leave_channel_sequence(ConnState& conn, ChannelCount& c);

}  // namespace ringsmb::smb2
