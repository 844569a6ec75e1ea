// The largest transact, read and write a connection's dialect allows
// (MS-SMB2 3.3.5.4): the configured sizes, but at most 64 KiB for SMB 2.0.2,
// which has no multi-credit requests (Windows and Samba advertise 65536
// there too). NEGOTIATE advertises these values and every handler enforces
// the same ones, so a client that trusts the advertisement never sends a
// request the server refuses, nor receives more than it asked for.
#pragma once

#include <algorithm>
#include <cstdint>

#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

inline constexpr uint32_t kSmb202MaxSize = 65536;

struct NegotiatedSizes {
  uint32_t max_trans = 0, max_read = 0, max_write = 0;
};

inline NegotiatedSizes negotiated_sizes(uint16_t dialect, const ServerContext& server) {
  if (dialect != 0x0202) return {server.max_trans, server.max_read, server.max_write};
  return {std::min(server.max_trans, kSmb202MaxSize), std::min(server.max_read, kSmb202MaxSize),
          std::min(server.max_write, kSmb202MaxSize)};
}

inline NegotiatedSizes negotiated_sizes(const ConnState& conn, const ServerContext& server) {
  return negotiated_sizes(conn.dialect, server);
}

}  // namespace ringsmb::smb2
