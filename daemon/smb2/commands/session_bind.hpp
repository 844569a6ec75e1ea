// SESSION_SETUP naming a session this connection does not hold: a binding
// (SMB2_SESSION_FLAG_BINDING, MS-SMB2 3.3.5.5) that adds this connection
// to the session's channels, or a refusal with the status Windows gives;
// or a session of another connection, refused. A refusal is signed with
// the named session's key when the request was (3.3.5.2.4, 3.3.4.1.1), as
// clients that require signing reject an unsigned one.
//
// A bound channel shares the tables of the session's connection
// (SessionTables), which must be on this worker: a binding for a session
// of another worker moves its connection there first (the processor's
// FrameResult::Move, docs/internals-sessions.md "Multichannel").
#pragma once

#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// A binding attempt for a session of another connection (any worker):
// USER_SESSION_DELETED (no such session), ACCESS_DENIED (bad signature),
// INVALID_PARAMETER (unsigned, or another dialect), NOT_SUPPORTED (guest or
// anonymous session), REQUEST_NOT_ACCEPTED (a 2.x connection, or otherwise:
// no second channel).
// SUCCESS when none of those applies and the connection may bind.
NtStatus refuse_binding(Request& req);

inline constexpr uint32_t kMultiChannelCapability = 0x8;  // SMB2_GLOBAL_CAP_MULTI_CHANNEL

// The valid session the binding REQ names, held by a connection of this
// worker (HOME_CONN); null when there is none here.
state::Session* session_to_bind(Request& req, ConnState*& home_conn);

// CONN becomes a channel of S, whose connection is HOME_CONN (same
// worker), with Channel.SigningKey SIGNING_KEY.
void add_channel(ConnState& conn, ConnState& home_conn, state::Session& s, Bytes signing_key);

// A SESSION_SETUP without the binding flag whose session is not in this
// connection's table: USER_SESSION_DELETED, signed when the request was
// signed with that session's key.
NtStatus refuse_foreign_session(Request& req);

}  // namespace ringsmb::smb2
