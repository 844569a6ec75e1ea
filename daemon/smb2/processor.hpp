// From one transport frame to its response: SMB1 negotiate upgrade,
// decryption, compound chains, message-id/credit checks, signature checks,
// dispatch, response signing and encryption.
#pragma once

#include "common/bytes.hpp"
#include "smb2/conn_state.hpp"
#include "smb2/server_context.hpp"

namespace ringsmb::smb2 {

enum class FrameResult { Ok, Drop };

// Handles one frame (without its 4-byte length) and appends the response
// frame (with its length) to `out`. Drop means: close the connection.
FrameResult process_frame(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out);

// Releases everything a connection holds (opens, sessions) when it ends.
void teardown_connection(ConnState& conn, ServerContext& server);

}  // namespace ringsmb::smb2
