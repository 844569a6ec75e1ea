// The connections of each client (MS-SMB2 3.3.1.5 ClientGuid), oldest
// first: a lease break goes to the client's oldest connection, whichever
// of its connections opened the lease (Windows does so, and Samba 4.17,
// which keeps a client's connections in one list: smb2.lease.v2_complex1
// expects the breaks of a lease opened only on a second connection of the
// client on its first). Touched once per NEGOTIATE and connection end, and
// once per lease break; never by file operations.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "state/lease_table.hpp"

namespace ringsmb::state {

class ClientConnections {
 public:
  // CONN negotiated with CLIENT (SMB 2.1 and later: a lease-capable one).
  void add(const Guid& client, const ConnAddress& conn);
  // CONN ended (nothing when it never negotiated).
  void remove(const Guid& client, const ConnAddress& conn);
  // The oldest live connection of CLIENT, if any.
  std::optional<ConnAddress> oldest(const Guid& client);

 private:
  struct GuidHash {
    size_t operator()(const Guid& g) const;
  };
  std::mutex mu_;
  std::unordered_map<Guid, std::vector<ConnAddress>, GuidHash> by_client_;  // each in order of arrival
};

}  // namespace ringsmb::state
