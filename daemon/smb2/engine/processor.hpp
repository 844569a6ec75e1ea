// From one transport frame to its response: SMB1 negotiate upgrade,
// decryption, compound chains, message-id/credit checks, signature checks,
// dispatch, response signing and encryption.
#pragma once

#include "common/bytes.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// Handles one frame (without its transport header) and appends the
// response message, framed by conn.framing, to `out`, then the final
// responses of async requests that became ready. Drop means: close the
// connection.
FrameResult process_frame(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out);

// Whether FRAME may change file data that an earlier READ of the
// connection left in the file for the transport to send (FileSegment):
// a WRITE, SET_INFO, CREATE (overwrite) or IOCTL, any compound, and any
// frame this cannot see into (encrypted, compressed). Read from the
// header only: a READ or CLOSE behind pipelined READs costs nothing.
bool may_change_file_data(ByteSpan frame);

}  // namespace ringsmb::smb2
