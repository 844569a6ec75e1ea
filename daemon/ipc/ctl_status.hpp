// What `ringsmbctl status` shows, as ringsmbd reports it: connections,
// sessions, tree connects and open files, and their LIST_* encoding
// (ctl_abi.hpp). ringsmbd fills a ServerStatus from its workers; ringsmbctl
// decodes the replies into one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "ipc/ctl_abi.hpp"
#include "ipc/ctl_codec.hpp"

namespace ringsmb::ipc {

struct ConnectionStatus {
  uint64_t connection_id = 0;
  std::string client_address;
  uint16_t dialect = 0;  // 0: NEGOTIATE not done yet
};

// One connection of a session (a channel, MS-SMB2 3.3.1.14).
struct ChannelStatus {
  uint64_t connection_id = 0;  // as in ConnectionStatus
  std::string client_address;
  uint16_t client_port = 0;
};

struct SessionStatus {
  uint64_t session_id = 0;
  uint64_t connection_id = 0;
  std::string user;
  std::string client_address;
  uint16_t dialect = 0;
  uint32_t flags = 0;  // abi::SESSION_* bits
  // Its channels, the first one first; empty from a ringsmbd that does not
  // report them (then the session has its one connection).
  std::vector<ChannelStatus> channels;
};

struct TreeConnectStatus {
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  std::string share;
  std::string user;
  std::string client_address;
};

struct LockStatus {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool exclusive = false;
};

struct OpenFileStatus {
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  std::string share;
  std::string path;  // relative to the share root; "" is the root itself
  std::string user;
  std::string client_address;
  uint64_t file_id = 0;  // what CLOSE_FILE takes
  uint32_t flags = 0;    // abi::OPEN_* bits
  uint8_t oplock_level = 0;  // SMB2 OplockLevel; kOplockLevelLease for a lease
  uint32_t lease_state = 0;  // SMB2_LEASE_* caching held now (an oplock's too)
  std::optional<std::array<uint8_t, 16>> lease_key;
  uint32_t lock_count = 0;        // every byte-range lock of the open
  std::vector<LockStatus> locks;  // the first abi::kMaxLocksPerEntry of them
  uint32_t kept_for_ms = 0;       // OPEN_DISCONNECTED: until the kept open is closed
};

inline constexpr uint8_t kOplockLevelLease = 0xFF;  // SMB2_OPLOCK_LEVEL_LEASE

struct ServerStatus {
  std::vector<ConnectionStatus> connections;
  std::vector<SessionStatus> sessions;
  std::vector<TreeConnectStatus> trees;
  std::vector<OpenFileStatus> open_files;
};

// The reply datagrams of the LIST_* command CMD with handle SEQ: STATUS
// Success and the entries of S that CMD lists, split so that each datagram
// stays below kMaxMessage; all but the last carry MORE_ENTRIES = 1. Strings
// longer than the policy allows are cut.
std::vector<Bytes> encode_list_replies(abi::Cmd cmd, uint32_t seq, const ServerStatus& s);

// Adds the entries of one parsed LIST_* reply M (parsed from DATA, LEN) to
// OUT. False when an entry violates the policy or lacks a required attribute.
bool decode_list_reply(const uint8_t* data, size_t len, const Message& m, ServerStatus& out);

// The reply datagrams of a command answered with TEXT too long for one
// ATTR_TEXT (GET_METRICS): STATUS Success and TEXT cut at line ends into
// pieces of at most kMaxTextPiece bytes (a longer line is cut where it must);
// all but the last carry MORE_ENTRIES = 1.
inline constexpr size_t kMaxTextPiece = 4000;  // ATTR_TEXT's policy allows 4096 with the NUL
std::vector<Bytes> encode_text_replies(abi::Cmd cmd, uint32_t seq, const std::string& text);

// "RWH", "RH", "R", "-": the caching bits of LEASE_STATE.
std::string lease_state_name(uint32_t state);
// "none", "II", "exclusive", "batch", "lease".
std::string oplock_level_name(uint8_t level);

// "192.0.2.1:49152", "[2001:db8::1]:49152": a channel's client end.
std::string address_with_port(const std::string& address, uint16_t port);

// "3.1.1", "2.0.2", ...; "-" for 0.
std::string dialect_name(uint16_t dialect);

}  // namespace ringsmb::ipc
