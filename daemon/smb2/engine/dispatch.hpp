// Table-driven dispatch of SMB2 requests (one constexpr table; each
// command's preconditions live in it, not in the handlers).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {

// The key and algorithm of a session of another connection (smb2/commands/session_bind.hpp).
struct ForeignSigner {
  crypto::SigningAlgorithm algorithm = crypto::SigningAlgorithm::HmacSha256;
  Bytes key;
};

struct Request {
  ConnState& conn;
  ServerContext& server;
  wire::Header hdr;
  ByteSpan pdu;   // header + body of this element
  ByteSpan body;  // after the 64-byte header
  bool encrypted = false;
  CompoundState& compound;
  state::Session* session = nullptr;  // set when the command needs a session
  state::Tree* tree = nullptr;        // set when the command needs a tree
  // Response header fields a handler may set.
  uint64_t response_session_id = 0;
  // Async (smb2/engine/async_engine.hpp): the AsyncId of a request answered
  // PENDING earlier that this run completes (a CREATE run again), or the
  // one start_waiting() gave a handler that returns STATUS_PENDING.
  uint64_t async_id = 0;
  // The response goes out alone and as written (not signed, encrypted or
  // compounded) through a transport that sends files: a READ may then set
  // file_data instead of copying the data; the processor positions it.
  bool may_send_file = false;
  // The response goes out alone, signed or encrypted (AES-GCM), through a
  // transport that sends FileSegments: a READ may read its data into a
  // FileSegment with `data` instead of the output buffer.
  bool may_read_to_memory = false;
  std::optional<FileSegment> file_data;
  // The body stays even though the status is an error: an IOCTL whose
  // error response carries data (MS-SMB2 3.3.5.15.6.2, copychunk limits).
  bool error_keeps_body = false;
  // Where this frame's responses begin in the output buffer: what a handler
  // adds must keep the frame within the transport's 24-bit length.
  size_t reply_start = 0;
  // A SESSION_SETUP naming a session of another connection whose signature
  // checked out with that session's key: the response is signed with it
  // (smb2/commands/session_bind.hpp). Empty for every other request.
  std::optional<ForeignSigner> foreign_signer;
  // The open's outstanding request this request counts as (smb2/engine/channel_sequence.hpp):
  // given back with its response, or by its waiting request.
  ChannelCount channel;

  // Resolves a FileId, honouring compound related ids.
  state::Open* find_open(FileId id);
  // The FileId in the body, where the dispatch table says it is.
  FileId body_file_id() const;
  // The open it names (related ids resolved), looked up once per element;
  // null when it names none.
  state::Open* open_file();
  bool open_looked_up = false;
  state::Open* open = nullptr;
};

// Writes the response body (after the header). A handler returns the status;
// for error statuses (other than MORE_PROCESSING_REQUIRED) whatever it wrote
// is replaced by the MS-SMB2 2.2.2 ERROR response, unless it set
// Request::error_keeps_body.
using Handler = NtStatus (*)(Request& req, ByteWriter& body);

struct CommandSpec {
  Handler handler;
  uint16_t structure_size;
  bool needs_session;
  bool needs_tree;
  // Body offset of the FileId the command carries (its related value is
  // the chain's; Request::open_file() resolves it); 0: none.
  uint8_t file_id_at;
  const char* name;
  // May be answered STATUS_PENDING and complete later (async_engine.hpp).
  bool may_go_async = false;
  // Body offsets of the 32-bit length fields whose largest is the payload
  // the CreditCharge must cover (MS-SMB2 3.3.5.2.5); 0: none.
  std::array<uint8_t, 2> payload_at{};
  uint16_t alt_structure_size = 0;  // OPLOCK_BREAK: 24 for oplocks, 36 for leases
};

const CommandSpec* command_spec(wire::Command cmd);

// Handlers, one file each under smb2/.
NtStatus handle_negotiate(Request&, ByteWriter&);
NtStatus handle_session_setup(Request&, ByteWriter&);
NtStatus handle_logoff(Request&, ByteWriter&);
NtStatus handle_tree_connect(Request&, ByteWriter&);
NtStatus handle_tree_disconnect(Request&, ByteWriter&);
NtStatus handle_create(Request&, ByteWriter&);
NtStatus handle_close(Request&, ByteWriter&);
NtStatus handle_flush(Request&, ByteWriter&);
NtStatus handle_read(Request&, ByteWriter&);
NtStatus handle_write(Request&, ByteWriter&);
NtStatus handle_lock(Request&, ByteWriter&);
NtStatus handle_ioctl(Request&, ByteWriter&);
NtStatus handle_echo(Request&, ByteWriter&);
NtStatus handle_query_directory(Request&, ByteWriter&);
NtStatus handle_change_notify(Request&, ByteWriter&);
NtStatus handle_query_info(Request&, ByteWriter&);
NtStatus handle_set_info(Request&, ByteWriter&);
NtStatus handle_oplock_break(Request&, ByteWriter&);

// Shared helpers for handlers.
// Reads a (offset, length) pair's buffer relative to the SMB2 header start;
// empty span and false if it lies outside the element.
bool buffer_at(const Request& req, uint32_t offset, uint32_t length, ByteSpan& out);
// Closes an open (share-mode release, delete-on-close) and forgets it.
void close_open(Request& req, state::Open* open);
void close_open(ConnState& conn, ServerContext& server, uint64_t volatile_id);
// Ends tree connect TREE_ID of SESSION as TREE_DISCONNECT does: its opens
// close oldest first, its waiting requests are withdrawn, the control plane
// is told, and the TreeId is forgotten (a later request on it gets
// NETWORK_NAME_DELETED).
void disconnect_tree(ConnState& conn, ServerContext& server, state::Session& session, uint32_t tree_id);
// What closing does once the open is out of its connection: locks, share
// modes and lease released, delete-on-close performed (under ROOT_FD, the
// share root, as IDENTITY; -1: not possible), the directory's leases
// broken except for CLIENT's (its ClientGuid). Also for a kept durable open
// that times out (smb2/durable/durable.hpp). RECYCLE: the share's recycle
// bin, where a deleted file goes instead (smb2/files/recycle.hpp); null: none.
void release_open(ServerContext& server, std::unique_ptr<state::Open> open, int root_fd,
                  const ipc::UnixUser& identity, const state::Guid& client, const config::RecycleConfig* recycle);
// Ends session S (LOGOFF, a failed re-authentication): closes its opens
// oldest first, withdraws its waiting requests; the session object is
// erased after the current frame.
void end_session(Request& req, state::Session& s);

}  // namespace ringsmb::smb2
