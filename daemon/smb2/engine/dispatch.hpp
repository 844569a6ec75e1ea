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

struct CommandSpec;

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
  // A binding SESSION_SETUP: the session it binds this connection to, and
  // the connection that holds that session (same worker).
  state::Session* bind_target = nullptr;
  ConnState* bind_home = nullptr;
  // The open's outstanding request this request counts as (smb2/engine/channel_sequence.hpp):
  // given back with its response, or by its waiting request.
  ChannelCount channel;

  // The open the body's FileId names (related ids resolved): set by the
  // processor before the handler runs for every command whose table row
  // has a FileId, never null then unless the row's open_optional allows it.
  state::Open* open = nullptr;

  // Sets `open` to the open the body's FileId names (a related one: the
  // chain's, MS-SMB2 3.3.5.2.7.2), once, before the handler runs;
  // STATUS_FILE_CLOSED when it names none (Samba's fileid_ofs), unless
  // SPEC lets the command run without one.
  NtStatus resolve_open(const CommandSpec& spec);
  // Resolves a FileId, honouring compound related ids.
  state::Open* find_open(FileId id);
  // The FileId in the body, where the dispatch table says it is.
  FileId body_file_id() const;
};

// Writes the response body (after the header). A handler returns the status;
// for error statuses (other than MORE_PROCESSING_REQUIRED) whatever it wrote
// is replaced by the MS-SMB2 2.2.2 ERROR response, unless it set
// Request::error_keeps_body.
using Handler = NtStatus (*)(Request& req, ByteWriter& body);

// What a command needs of the session its header names (MS-SMB2 3.3.5.2.9).
enum class SessionNeed : uint8_t {
  None,   // NEGOTIATE, SESSION_SETUP, ECHO, CANCEL: any session or none
  Valid,  // the rest: a session of this connection whose setup completed
};

// One row of the dispatch table: what the processor checks and resolves
// before the handler runs, so that no handler repeats it.
struct CommandSpec {
  Handler handler;
  const char* name;
  uint16_t structure_size;
  uint16_t alt_structure_size = 0;  // OPLOCK_BREAK: 24 for oplocks, 36 for leases
  SessionNeed session = SessionNeed::None;
  bool needs_tree = false;
  // Body offset of the FileId the command carries (its related value is
  // the chain's); 0: none. The alternate structure size's form carries
  // none (an OPLOCK_BREAK for a lease has a LeaseKey there).
  uint8_t file_id_at = 0;
  // Whether a request whose FileId names no open may still run (IOCTL:
  // FSCTL_VALIDATE_NEGOTIATE_INFO and the like name none); null: it may
  // not. Otherwise the processor answers STATUS_FILE_CLOSED before the
  // handler, which finds the open in Request::open.
  bool (*open_optional)(const Request&) = nullptr;
  // May change what an open holds (MS-SMB2 3.3.5.2.10, Samba's `modify`):
  // a request from a stale channel fails with STATUS_FILE_NOT_AVAILABLE.
  bool modifies = false;
  // May change file data an earlier READ left in the file for the
  // transport to send (may_change_file_data()): what modifies, and CREATE
  // (an overwrite).
  bool changes_file_data = false;
  // May be answered STATUS_PENDING and complete later (async_engine.hpp).
  bool may_go_async = false;
  // Body offsets of the 32-bit length fields whose largest is the payload
  // the CreditCharge must cover (MS-SMB2 3.3.5.2.5); 0: none.
  std::array<uint8_t, 2> payload_at{};
  // May act on the quota file's open (state::Open::quota_file), which has
  // no file behind it: every other command answers it
  // STATUS_INVALID_DEVICE_REQUEST before its handler runs.
  bool serves_quota_file = false;

  bool needs_session() const { return session == SessionNeed::Valid; }
  // Whether the request in BODY carries a FileId (its form has one).
  bool carries_file_id(ByteSpan body) const {
    return file_id_at && !(alt_structure_size && body.size() >= 2 && load_le16(body.data()) == alt_structure_size);
  }
};

// Hold: the frame was not processed (nothing of it was done or answered)
// because this connection's large WRITEs are still in flight
// (smb2/engine/async_write.hpp); the transport keeps it, with every frame after
// it, and hands it over again once conn.writes_in_flight is 0.
// Move: the frame is to run on another worker (ConnState::move_to): a
// session binding whose session lives there, or the NEGOTIATE of a client
// whose other connections live there; nothing was done.
enum class FrameResult { Ok, Drop, Hold, Move };

// The dispatch table: a row per command, in wire::Command order, the
// SMB1 NEGOTIATE that a client may start with (answered with an SMB2
// NEGOTIATE response), and what the layers below durable call of it. The handlers live above the engine, which reaches
// them only through this table: smb2/commands/command_table.cpp fills it
// and install_commands() there installs it before the first request.
struct CommandTable {
  std::array<CommandSpec, wire::kCommandCount> commands;
  FrameResult (*smb1_negotiate)(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out);
  // A break whose holder has no connection (a kept durable open): its kept
  // opens are closed (smb2/durable/durable.hpp). Called by the leases,
  // which sit below durable (closing an open breaks leases).
  void (*close_unreachable_holder)(ServerContext& server, const state::BreakNotice& b);
};
// Makes TABLE the one the engine dispatches through (once, at startup,
// before any worker runs; TABLE lives as long as the process).
void install_command_table(const CommandTable& table);
// The installed table.
const CommandTable& command_table();
// Its row for CMD; null for a command number past the table.
const CommandSpec* command_spec(wire::Command cmd);
// STATUS_INVALID_PARAMETER unless BODY's StructureSize is the command's and
// the body holds its fixed part (MS-SMB2 3.3.5.2.6); checked before anything else.
NtStatus check_structure_size(const CommandSpec& spec, ByteSpan body);

// Shared helpers for handlers.
// Reads a (offset, length) pair's buffer relative to the SMB2 header start;
// empty span and false if it lies outside the element.
bool buffer_at(const Request& req, uint32_t offset, uint32_t length, ByteSpan& out);
}  // namespace ringsmb::smb2
