// The clock of the SMB2 layer: milliseconds of CLOCK_MONOTONIC, for
// deadlines (lease breaks, durable opens, deferred interim responses).
#pragma once

#include <cstdint>

namespace ringsmb::smb2 {

int64_t monotonic_ms();

}  // namespace ringsmb::smb2
