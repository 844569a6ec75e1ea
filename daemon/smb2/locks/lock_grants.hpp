// Byte-range locks on the SMB2 side, for LOCK (smb2/commands/lock.cpp) and
// for whatever releases locks (closing an open): the blocking locks the
// lock table granted when locks went are answered on their connections.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "smb2/engine/server_context.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {

// The LOCK response body (MS-SMB2 2.2.27).
inline constexpr uint8_t kLockResponse[4] = {4, 0, 0, 0};

// Posts each granted waiter's final response to its connection's worker.
void post_lock_grants(ServerContext& server, const std::vector<state::LockWaiter>& granted);

}  // namespace ringsmb::smb2
