// Breaks that arrive while another is unacknowledged (MS-SMB2 3.3.4.7,
// 3.3.5.22.2; MS-FSA 2.1.5.17, 2.1.5.18).
//
// A lease has at most one break notification out. A contention that comes
// while it is out sends nothing: it only lowers the state the lease must
// end up in (Lease::break_required). When the client acknowledges (or the
// break times out, MS-SMB2 3.3.2.5) and the state it kept is still above
// that, the next break goes out at once, in steps as Windows does
// (smb2.lease.breaking3): a state with H or W falls to what is required
// plus R first, then R falls to nothing. The opens that wait for the
// break wait until the whole sequence is over, so their responses follow
// the last break they waited for.
//
// Every function here runs under the lease's file node's shard mutex.
#pragma once

#include <cstdint>
#include <vector>

#include "state/lease_table.hpp"

namespace ringsmb::state {

// The notification of a break of L from FROM to TO (its epoch as L has it now).
BreakNotice lease_break_notice(const Lease& l, uint32_t from, uint32_t to, bool ack_required);

// Does a break from STATE need an acknowledgment? Away from W or H for a
// lease, from W (exclusive, batch) for an oplock.
bool break_needs_ack(const Lease& l, uint32_t state);

// A contention wants L at TARGET while a break of L is out: remembered,
// nothing is sent now.
void queue_break(Lease& l, uint32_t target);

// L's outstanding break ended (acknowledged to, or timed out at, l.state).
// When the queued contention requires less than l.state, starts the next
// step and appends its notice to OUT. True while a break that needs an
// acknowledgment is out again; false when the break is over.
bool continue_break(Lease& l, int64_t now_ms, std::vector<BreakNotice>& out);

// Must an open that contends L wait while L breaks? Only for a break that
// takes W (cached writes must reach the file first), or H when the open
// conflicts with the holder's share modes (its cached handles must close).
// An overwrite of a file leased RH breaks it and goes on (smb2.lease.breaking4).
bool break_blocks_open(const Lease& l, bool share_conflict);

}  // namespace ringsmb::state
