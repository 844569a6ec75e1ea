// The async engine (MS-SMB2 3.3.4.2, 3.3.4.4, 3.3.5.16): one table of
// waiting requests per connection (ConnState::async), for everything that
// waits: a CREATE behind an oplock or lease break, a READ on an empty pipe,
// a blocking byte-range LOCK (and, later, CHANGE_NOTIFY).
//
// A handler that must wait calls start_waiting() and returns
// STATUS_PENDING; the processor answers with the interim response (its
// AsyncId, SMB2_FLAGS_ASYNC_COMMAND, the credits). The final response is a
// message of its own, built by complete() and sent after the frame being
// processed (send_ready(), smb2/engine/chain.hpp), signed or encrypted as the request was. CANCEL
// (by AsyncId or MessageId), CLOSE, TREE_DISCONNECT, LOGOFF and the end of
// the connection withdraw waiting requests through each one's hook.
// Everything here runs on the connection's worker thread; a completion
// decided on another worker is posted (post_to_conn(), chain.hpp).
#pragma once

#include <functional>

#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// Registers REQ as waiting: W carries the kind, the hook and its data; the
// engine fills in the header fields, the seal and the AsyncId (REQ's own
// when it is a CREATE run again). Returns STATUS_PENDING (the handler
// returns it), STATUS_INSUFFICIENT_RESOURCES over a limit, or
// STATUS_INVALID_PARAMETER when the command may not go async (dispatch table).
NtStatus start_waiting(Request& req, WaitingRequest&& w);
// The timer's side of defer_interim() (chain.hpp): sends the held interim
// of ASYNC_ID if it still waits.
void send_deferred_interim(ConnState& conn, uint64_t async_id);
// The AsyncId the next start_waiting() of CONN gives (a CREATE registers
// it with the file table before it knows it waits).
inline uint64_t next_async_id(const ConnState& conn) { return conn.async.next_id; }
// Would start_waiting() refuse REQ for its limits? (The second form: a
// request of session SESSION_ID on CONN, before it runs.)
bool has_room_to_wait(const Request& req);
bool has_room_to_wait(const ConnState& conn, const ServerContext& server, uint64_t session_id);
// The waiting request with this AsyncId, or null.
WaitingRequest* find_waiting(ConnState& conn, uint64_t async_id);
// Ends waiting request ASYNC_ID with STATUS and (for a success) BODY,
// the response body after the header; the response goes out with the
// next send_ready(). False when no such request waits.
bool complete(ConnState& conn, uint64_t async_id, NtStatus status, ByteSpan body = {});
// Takes a waiting request out of the table without answering it (a
// CREATE run again: its chain answers).
std::optional<WaitingRequest> take_waiting(ConnState& conn, uint64_t async_id);

// CANCEL (3.3.5.16): the request named by AsyncId (async header) or
// MessageId completes with STATUS_CANCELLED; nothing when none waits.
void cancel_request(ConnState& conn, ServerContext& server, const wire::Header& cancel);
// CLOSE of an open, TREE_DISCONNECT, LOGOFF: withdraws the requests that
// wait on the open / tree / session (0 matches any), answering each with
// the status its hook gives.
void withdraw_open(ConnState& conn, ServerContext& server, uint64_t volatile_id);
void withdraw_tree(ConnState& conn, ServerContext& server, uint64_t session_id, uint32_t tree_id);
void withdraw_session(ConnState& conn, ServerContext& server, uint64_t session_id);
// The connection ended: every waiting request is withdrawn unanswered.
void withdraw_all(ConnState& conn, ServerContext& server);
// FROM ends while waiting request ASYNC_ID of it is to go on: it waits on
// TO (another channel of its session, on this worker) from now on, under
// the AsyncId returned (0: no such request), and whatever it answers is
// dropped, as nobody asked TO for it (AsyncTable::detached).
uint64_t hand_over_waiting(ConnState& from, ConnState& to, uint64_t async_id);

}  // namespace ringsmb::smb2
