// The connections of each client (MS-SMB2 3.3.1.5 ClientGuid) that hold
// an authenticated session, with the session's user, oldest first: a
// lease break goes to the client's oldest connection that holds a session
// of the lease owner's user, whichever of its connections opened the
// lease (Windows does so, and Samba 4.17, which keeps a client's
// connections in one list: smb2.lease.v2_complex1 expects the breaks of a
// lease opened only on a second connection of the client on its first).
//
// The ClientGuid is no secret (every NEGOTIATE carries it in clear), so a
// connection counts only once a session on it is valid, and only for that
// session's user: a connection that merely negotiated with a victim's
// ClientGuid, or holds another user's session, never receives the
// victim's breaks. Touched once per session setup, logoff and connection
// end, and once per lease break; never by file operations.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "state/lease_table.hpp"

namespace ringsmb::state {

class ClientConnections {
 public:
  // Session SESSION_ID of USER became valid on CONN, which negotiated
  // with CLIENT (SMB 2.1 and later: a lease-capable one).
  void add(const Guid& client, const ConnAddress& conn, uint64_t session_id, const std::string& user);
  // The session re-authenticated as USER.
  void rename(const Guid& client, const ConnAddress& conn, uint64_t session_id, const std::string& user);
  // The session ended (LOGOFF, a failed re-authentication, superseded).
  void remove_session(const Guid& client, const ConnAddress& conn, uint64_t session_id);
  // CONN ended: all its sessions.
  void remove(const Guid& client, const ConnAddress& conn);
  // The oldest connection of CLIENT with a session of USER, if any.
  std::optional<ConnAddress> oldest(const Guid& client, std::string_view user);
  // The oldest connection of CLIENT with a session of any user, if any:
  // where a new connection of the client is served (transport placement at
  // NEGOTIATE, docs/internals-sessions.md "Multichannel"). Only a placement hint:
  // it grants nothing.
  std::optional<ConnAddress> oldest(const Guid& client);

 private:
  struct GuidHash {
    size_t operator()(const Guid& g) const;
  };
  struct Entry {
    ConnAddress conn;
    uint64_t session_id = 0;
    std::string user;
  };
  std::mutex mu_;
  std::unordered_map<Guid, std::vector<Entry>, GuidHash> by_client_;  // each in order of arrival
};

}  // namespace ringsmb::state
