#include "state/session_registry.hpp"

#include "common/assert.hpp"

namespace ringsmb::state {

void SessionRegistry::add(uint64_t session_id, SessionHome home) {
  // 0 and all ones are never a SessionId (MS-SMB2 3.3.5.5.1 does not hand
  // them out; requests use them as "none" and "the related one").
  RINGSMB_ASSERT(session_id != 0 && session_id != UINT64_MAX);
  Shard& s = shard_for(session_id);
  std::lock_guard lock(s.mu);
  s.sessions[session_id] = std::move(home);
}

void SessionRegistry::remove(uint64_t session_id) {
  Shard& s = shard_for(session_id);
  std::lock_guard lock(s.mu);
  s.sessions.erase(session_id);
}

std::optional<SessionHome> SessionRegistry::find(uint64_t session_id) {
  Shard& s = shard_for(session_id);
  std::lock_guard lock(s.mu);
  auto it = s.sessions.find(session_id);
  if (it == s.sessions.end()) return std::nullopt;
  return it->second;
}

}  // namespace ringsmb::state
