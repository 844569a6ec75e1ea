// The SMB1 multi-protocol NEGOTIATE that older clients (and smbclient
// without -m) start with: answered with an SMB2 NEGOTIATE response
// (MS-SMB2 3.3.5.3.1). SMB1 itself is not served.
#pragma once

#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

FrameResult handle_smb1_negotiate(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out);

// Writes the NEGOTIATE response body for `dialect` (0x02FF for the SMB1
// upgrade); shared by the SMB1 and SMB2 paths. `contexts` holds the 3.1.1
// negotiate contexts, already encoded (empty otherwise).
void write_negotiate_body(ConnState& conn, ServerContext& server, uint16_t dialect, ByteSpan contexts,
                          uint16_t context_count, ByteWriter& w);

}  // namespace ringsmb::smb2
