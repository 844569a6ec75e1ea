// Where each valid session lives (MS-SMB2 3.3.1.5 GlobalSessionTable,
// reduced to what session reconnect and binding need): SessionId -> the
// connection that holds it, its user, and a copy of what checking and
// signing a message for it takes. A SESSION_SETUP with a PreviousSessionId
// (3.3.5.5.3) finds the old session here and asks that connection's
// worker to end it; a binding attempt or a SESSION_SETUP naming a session
// of another connection (3.3.5.5, 3.3.5.2.4) is checked and answered with
// the copied key, never by touching the other worker's connection.
// Sharded; touched once per login and logoff, never by file operations.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/bytes.hpp"
#include "crypto/smb2_keys.hpp"
#include "state/lease_table.hpp"

namespace ringsmb::state {

struct SessionHome {
  ConnAddress conn;
  std::string user;
  // Session.Connection.Dialect and its signing algorithm, Session.SigningKey
  // (3.x) or Session.SessionKey (2.x): copies, so another worker can verify
  // and sign a SESSION_SETUP for this session.
  uint16_t dialect = 0;
  crypto::SigningAlgorithm signing_algorithm = crypto::SigningAlgorithm::HmacSha256;
  Bytes signing_key;
  bool guest_or_anonymous = false;
  // Session.Connection's cipher (none: 2.x, or no common one): a binding
  // from a connection with another cipher is refused.
  std::optional<crypto::Aead> cipher;
};

class SessionRegistry {
 public:
  void add(uint64_t session_id, SessionHome home);
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
