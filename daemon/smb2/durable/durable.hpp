// Durable handles and their reconnect (MS-SMB2 3.3.5.9.6, 3.3.5.9.7,
// 3.3.5.9.10, 3.3.5.9.12, 3.3.7.1), replay detection of a v2 CREATE, and
// the end of a session superseded by a reconnecting client
// (PreviousSessionId, 3.3.5.5.3).
//
// A durable open is an ordinary state::Open marked durable. When its
// connection ends (or its session is superseded) while it still holds its
// batch oplock or a lease with H, it moves, as it is, into the server's
// state::DurableTable: its share mode, lease, byte-range locks and
// delete-on-close stay in the file, lease and lock tables, which key them
// on the Open itself. A CREATE with DHnC/DH2C from the same user (and,
// for a lease, the same client and lease key) moves it into the new
// connection; otherwise the owning worker closes it as CLOSE would when
// its timeout passes (the worker's 1 s tick), and a break that would need
// its acknowledgment closes it at once (3.3.2.2: nobody could answer).
// Nothing here runs for a CREATE without durable contexts.
#pragma once

#include <string_view>

#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/create_context_chain.hpp"

namespace ringsmb::smb2 {

// The durable-handle contexts of a CREATE (MS-SMB2 2.2.13.2.3, .4, .11, .12).
struct DurableRequest {
  bool v1_request = false;    // DHnQ
  bool v1_reconnect = false;  // DHnC
  bool v2_request = false;    // DH2Q (SMB 3.x)
  bool v2_reconnect = false;  // DH2C (SMB 3.x)
  FileId reconnect_id;        // DHnC / DH2C: the open to reconnect
  state::Guid create_guid{};  // DH2Q / DH2C
  uint32_t timeout_ms = 0;    // DH2Q: 0 asks for the server's default
  uint32_t flags = 0;         // DH2Q / DH2C: SMB2_DHANDLE_FLAG_PERSISTENT
  bool app_instance = false;  // SMB2_CREATE_APP_INSTANCE_ID (2.2.13.2.13, SMB 3.x)
  state::Guid app_instance_id{};
  bool reconnect() const { return v1_reconnect || v2_reconnect; }
  bool request() const { return v1_request || v2_request; }
};

// Reads the durable contexts of BUFFER (and SMB2_CREATE_APP_INSTANCE_ID);
// STATUS_INVALID_PARAMETER for a malformed one or a combination MS-SMB2
// refuses.
NtStatus find_durable_request(const Request& req, ByteSpan buffer, DurableRequest& out);

// DH2Q (3.3.5.9.10): the open of this client with the request's
// CreateGuid, if it lives. For a replay (SMB2_FLAGS_REPLAY_OPERATION) on
// this connection, OUT is that open, to be answered again; a request that
// is not a replay gets STATUS_DUPLICATE_OBJECTID. Success with OUT null:
// open as usual.
NtStatus find_replayed_open(Request& req, const DurableRequest& d, state::Open*& out);

// A successful open: makes it durable when MS-SMB2 allows (a file, with a
// batch oplock or a lease with H granted; never persistent) and appends
// the DHnQ / DH2Q response context to CONTEXTS.
void grant_durable(Request& req, const DurableRequest& d, state::Open& open, uint32_t create_action,
                   Bytes& contexts);
// The DHnQ / DH2Q response context of a durable OPEN (a replayed CREATE).
void answer_durable(const state::Open& open, Bytes& contexts);

// SMB2_CREATE_APP_INSTANCE_ID (3.3.5.9.13): the opens of PATH made with the
// same AppInstanceId by the same user through another client (a failover
// of the application to another node) are closed before this CREATE
// takes its share modes. The caller runs this only once the CREATE's
// access checks passed, so a refused CREATE closes nothing; another
// user's open is never closed (the AppInstanceId is no secret). A kept
// one is closed at once; a live one on its connection, while this CREATE
// waits (STATUS_PENDING, at most 2 s; a CREATE run again does not wait
// twice).
NtStatus close_previous_app_instance(Request& req, const DurableRequest& d, std::string_view path);
// A successful open with SMB2_CREATE_APP_INSTANCE_ID: Open.AppInstanceId,
// in the index the next CREATE of the application looks in.
void remember_app_instance(Request& req, const DurableRequest& d, state::Open& open, std::string_view path);

// FSCTL_LMR_REQUEST_RESILIENCY (3.3.5.15.9, 2.2.31.3): OPEN becomes
// resilient for the Timeout of INPUT (ms; 0: the durable default; more
// than durable_max_timeout_ms: STATUS_INVALID_PARAMETER).
NtStatus request_resiliency(Request& req, state::Open& open, ByteSpan input);

// DHnC / DH2C: moves the kept open into this connection, session and tree
// and returns it; or the status MS-SMB2 names (OBJECT_NAME_NOT_FOUND,
// ACCESS_DENIED for another user, INVALID_PARAMETER for another name).
Result<state::Open*> reconnect_durable(Request& req, ByteSpan name, const LeaseRequest& lease,
                                       const DurableRequest& d);

// A reconnect found nothing kept: when the open is still live on another
// connection (its client closed it and reconnected at once, and that
// connection's end has not been seen yet), the CREATE waits for it to be
// kept, at most 2 s (STATUS_PENDING); else OBJECT_NAME_NOT_FOUND. A CREATE
// run again after such a wait does not wait twice.
NtStatus wait_for_reconnect(Request& req, const DurableRequest& d);

// The connection ends, or session SESSION_ID (0: every session) is
// superseded: its durable opens that still hold their oplock or lease,
// and its resilient opens, are kept for reconnection. Run before the remaining opens are closed.
void keep_durable_opens(ConnState& conn, ServerContext& server, uint64_t session_id);

// A session that ends without a LOGOFF (its connection or last channel
// lost, or ended here for a binding): its durable opens kept as above, its
// other opens closed, in FileId order.
void keep_or_close_session_opens(ConnState& conn, ServerContext& server, uint64_t session_id);
// WORKER's tick: closes its kept opens whose timeout has passed; how many.
size_t expire_durable_opens(ServerContext& server, uint32_t worker, int64_t now_ms);
// A break notice whose holder has no connection: the kept opens of that
// lease or oplock are closed (their wakeups posted).
void close_unreachable_holder(ServerContext& server, const state::BreakNotice& b);
// `ringsmbctl file close`: the kept open PERSISTENT_ID is closed as by
// CLOSE, so no reconnect finds it; false when none is kept.
bool close_kept_open(ServerContext& server, uint64_t persistent_id);
// Shutdown: every kept open is closed as by CLOSE (delete-on-close
// included). A restart loses durable state.
void close_kept_opens(ServerContext& server);

// SESSION_SETUP with PreviousSessionId (3.3.5.5.3): the old session of the
// same user ends on its connection (its durable opens kept). The reply to
// this request is held until that is done, so the client's reconnect
// CREATE that follows finds the opens kept.
void end_previous_session(Request& req, uint64_t previous_session_id, const std::string& user);

}  // namespace ringsmb::smb2
