// The one way out for every response: synchronous, interim, late (the
// final response of a request that waited) and break notifications are
// all signed or encrypted and framed here. The frame header (the 4-byte
// length of direct TCP) is the transport's (ConnState::framing).
#pragma once

#include "common/bytes.hpp"
#include "smb2/engine/conn_state.hpp"

namespace ringsmb::smb2 {

// Starts a message at the end of OUT; returns where it starts.
size_t open_message(ConnState& conn, Bytes& out);
// Makes room at the end of OUT for the TRANSFORM_HEADER of a message to be
// encrypted; the message is written after it.
void reserve_transform_header(Bytes& out);
// The message written since START is complete: encrypts it or signs it as
// SEAL says (a compound chain signs its elements itself and passes a seal
// that does not sign) and frames it, FILE_BYTES of FileSegments included.
// An encrypting SEAL expects the room of reserve_transform_header() right
// at START and encrypts in place; its FILE_BYTES must be one segment read
// into memory (FileSegment::data) at the end of OUT, encrypted with it. An empty message is taken back. False
// when the seal cannot be applied (no cipher): the message is dropped.
bool close_message(ConnState& conn, Bytes& out, size_t start, const ResponseSeal& seal, size_t file_bytes = 0);
// open + copy MESSAGE + close.
bool send_message(ConnState& conn, Bytes& out, ByteSpan message, const ResponseSeal& seal);

// Signs one element of a response in place (MS-SMB2 3.3.4.1.1).
// TRAILING: the element's last bytes when they are in a buffer of their own.
void sign_element(const ConnState& conn, ByteSpan signing_key, std::span<uint8_t> element, ByteSpan trailing = {});

}  // namespace ringsmb::smb2
