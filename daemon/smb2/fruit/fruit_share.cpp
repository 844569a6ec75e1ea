#include "smb2/fruit/fruit_share.hpp"

#include "smb2/engine/conn_state.hpp"

namespace ringsmb::smb2::fruit {

bool fruit_share(const Request& req) { return req.tree && req.tree->share.fruit.enabled; }

bool aapl_negotiated(const Request& req) { return (req.conn.aapl_flags & kAaplNegotiated) && fruit_share(req); }

bool nfs_aces_on(const Request& req) { return aapl_negotiated(req) && req.tree->share.fruit.nfs_aces; }

}  // namespace ringsmb::smb2::fruit
