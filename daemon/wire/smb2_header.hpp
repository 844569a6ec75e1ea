// The SMB2 packet header (MS-SMB2 2.2.1), command codes, and flags.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::wire {

inline constexpr size_t kHeaderSize = 64;
inline constexpr uint32_t kProtocolIdSmb2 = 0x424D53FE;  // 0xFE 'S' 'M' 'B'
inline constexpr uint32_t kProtocolIdSmb1 = 0x424D53FF;  // 0xFF 'S' 'M' 'B'
inline constexpr uint32_t kProtocolIdTransform = 0x424D53FD;
inline constexpr uint64_t kRelatedId = 0xFFFFFFFFFFFFFFFFull;  // "use the previous element's id"

enum class Command : uint16_t {
  Negotiate = 0x00, SessionSetup = 0x01, Logoff = 0x02, TreeConnect = 0x03, TreeDisconnect = 0x04,
  Create = 0x05, Close = 0x06, Flush = 0x07, Read = 0x08, Write = 0x09, Lock = 0x0A, Ioctl = 0x0B,
  Cancel = 0x0C, Echo = 0x0D, QueryDirectory = 0x0E, ChangeNotify = 0x0F, QueryInfo = 0x10,
  SetInfo = 0x11, OplockBreak = 0x12,
};
inline constexpr uint16_t kCommandCount = 0x13;

enum : uint32_t {
  SMB2_FLAGS_SERVER_TO_REDIR = 0x00000001,
  SMB2_FLAGS_ASYNC_COMMAND = 0x00000002,
  SMB2_FLAGS_RELATED_OPERATIONS = 0x00000004,
  SMB2_FLAGS_SIGNED = 0x00000008,
  SMB2_FLAGS_PRIORITY_MASK = 0x00000070,
  SMB2_FLAGS_DFS_OPERATIONS = 0x10000000,
  SMB2_FLAGS_REPLAY_OPERATION = 0x20000000,
};

// Field offsets inside the 64-byte header.
namespace hdr {
inline constexpr size_t ProtocolId = 0;
inline constexpr size_t StructureSize = 4;
inline constexpr size_t CreditCharge = 6;
inline constexpr size_t Status = 8;  // ChannelSequence/Reserved in requests
inline constexpr size_t Command = 12;
inline constexpr size_t CreditRequestResponse = 14;
inline constexpr size_t Flags = 16;
inline constexpr size_t NextCommand = 20;
inline constexpr size_t MessageId = 24;
inline constexpr size_t AsyncId = 32;  // async form: 8 bytes
inline constexpr size_t Reserved = 32; // sync form
inline constexpr size_t TreeId = 36;   // sync form
inline constexpr size_t SessionId = 40;
inline constexpr size_t Signature = 48;
}  // namespace hdr

struct Header {
  uint16_t credit_charge = 0;
  uint32_t status = 0;  // ChannelSequence in requests (3.x)
  Command command = Command::Negotiate;
  uint16_t credits = 0;  // CreditRequest / CreditResponse
  uint32_t flags = 0;
  uint32_t next_command = 0;
  uint64_t message_id = 0;
  uint64_t async_id = 0;  // valid when flags has ASYNC
  uint32_t tree_id = 0;   // valid when not ASYNC
  uint64_t session_id = 0;
  uint8_t signature[16] = {};

  bool is_async() const { return flags & SMB2_FLAGS_ASYNC_COMMAND; }
  bool is_related() const { return flags & SMB2_FLAGS_RELATED_OPERATIONS; }
  bool is_signed() const { return flags & SMB2_FLAGS_SIGNED; }
};

// Parses the header at the start of `pdu`; false if it is short or its
// ProtocolId / StructureSize are wrong.
bool parse_header(ByteSpan pdu, Header& out);
// Stores a 64-byte response header at `dst` (no allocation: the processor
// writes it in place over the space it reserved before the handler ran).
void store_header(uint8_t* dst, const Header& h);
// Appends a 64-byte response header.
void write_header(ByteWriter& w, const Header& h);

}  // namespace ringsmb::wire
