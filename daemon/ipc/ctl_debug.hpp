// DEBUG (ctl_abi.hpp): `ringsmbctl debug LEVEL` changes a running daemon's
// log level, as Samba's `smbcontrol smbd debug`. Both daemons answer it
// the same way, with this function.
#pragma once

#include "common/bytes.hpp"
#include "ipc/ctl_codec.hpp"

namespace ringsmb::ipc {

// Applies the request's LOG_LEVEL (when present), logs the change and
// builds the reply.
Bytes answer_debug(const Message& m, uint32_t from_port);

}  // namespace ringsmb::ipc
