// Whether fruit (smb2/fruit/, Apple's SMB2 extensions) applies to a
// request: the share's switch ("vfs objects = fruit", config::FruitOptions)
// and what the connection's AAPL query turned on (smb2/fruit/aapl.hpp).
// The other fruit components, and the streams and security code that
// asks fruit, build on these; this includes none of them.
#pragma once

#include <cstdint>

#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2::fruit {

// ConnState::aapl_flags: what the connection's AAPL query turned on.
inline constexpr uint8_t kAaplNegotiated = 1u << 0;
inline constexpr uint8_t kAaplReaddirAttr = 1u << 1;  // Mac metadata in directory listings
inline constexpr uint8_t kAaplCopyfile = 1u << 2;     // COPYCHUNK of no chunks copies every stream

// Whether the tree's share has fruit on.
bool fruit_share(const Request& req);

// Whether AAPL was negotiated on this connection, on a fruit share.
bool aapl_negotiated(const Request& req);

// Whether this request's security descriptors carry the NFS ACEs
// (smb2/security/nfs_aces.hpp): a fruit share with fruit:nfs_aces, and
// AAPL negotiated on the connection.
bool nfs_aces_on(const Request& req);

}  // namespace ringsmb::smb2::fruit
