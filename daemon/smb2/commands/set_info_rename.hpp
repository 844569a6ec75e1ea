// SET_INFO's rename (set_info_rename.cpp).
#pragma once

#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// FileRenameInformation, or FileRenameInformationEx when EX (MS-FSCC
// 2.4.42): renames OPEN's file to the name in BUF.
NtStatus set_rename(Request& req, state::Open& open, ByteSpan buf, bool ex);

// MS-FSA 2.1.5.14.11 with 2.1.4.12: a rename breaks the other opens'
// handle caching and waits until those breaks are over (their holders may
// have to close cached handles first; smb2.lease.rename_wait); a
// directory's rename does the same for the handles below it. It waits on
// the async engine like a CREATE behind a break: answered PENDING, run
// again from here when the acknowledgment, the holder's CLOSE or the break
// timeout comes, and then finds nothing left to wait for. Past the
// engine's limits it does not wait.
NtStatus break_handles_before_rename(Request& req, state::Open& open);

}  // namespace ringsmb::smb2
