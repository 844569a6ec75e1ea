// The clock of the SMB2 layer: milliseconds of CLOCK_MONOTONIC, for the
// deadlines smb2/ keeps (lease breaks, durable opens, deferred interim
// responses, delayed write times, notify's own changes, a held login
// answer). smb2/ reads the time only here; state/ takes it as an argument.
// A unit test puts a clock of its own in place and advances it instead of
// sleeping (tests/unit/smb2/manual_clock.hpp).
#pragma once

#include <cstdint>

namespace ringsmb::smb2 {

using ClockFn = int64_t (*)();

int64_t monotonic_ms();

// Makes FN the clock monotonic_ms() reads (null: CLOCK_MONOTONIC again);
// returns the one it replaces. For tests: set before the code under test
// runs, not while other threads read the clock.
ClockFn set_clock(ClockFn fn);

}  // namespace ringsmb::smb2
