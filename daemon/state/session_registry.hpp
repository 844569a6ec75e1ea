// Where each valid session lives (MS-SMB2 3.3.1.5 GlobalSessionTable,
// reduced to what session reconnect needs): SessionId -> the connection
// that holds it and its user. A SESSION_SETUP with a PreviousSessionId
// (3.3.5.5.3) finds the old session here and asks that connection's
// worker to end it. Sharded; touched once per login and logoff, never
// by file operations.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "state/lease_table.hpp"

namespace ringsmb::state {

struct SessionHome {
  ConnAddress conn;
  std::string user;
};

class SessionRegistry {
 public:
  void add(uint64_t session_id, const ConnAddress& conn, const std::string& user);
  void remove(uint64_t session_id);
  std::optional<SessionHome> find(uint64_t session_id);

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_map<uint64_t, SessionHome> sessions;
  };
  Shard& shard_for(uint64_t id) { return shards_[id % kShards]; }
  std::array<Shard, kShards> shards_;
};

}  // namespace ringsmb::state
