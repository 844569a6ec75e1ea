// Byte-range locks on the SMB2 side (lock.cpp): the blocking locks the
// lock table granted when locks went are answered on their connections.
#pragma once

#include <vector>

#include "smb2/engine/server_context.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {

// Posts each granted waiter's final response to its connection's worker.
void post_lock_grants(ServerContext& server, const std::vector<state::LockWaiter>& granted);

}  // namespace ringsmb::smb2
