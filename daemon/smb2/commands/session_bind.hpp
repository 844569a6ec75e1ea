// SESSION_SETUP naming a session this connection does not hold: a binding
// attempt (SMB2_SESSION_FLAG_BINDING, MS-SMB2 3.3.5.5 step 4) or a session
// of another connection. ringsmbd does not offer multichannel, so neither
// ever succeeds; what matters is the status, and that the refusal is signed
// with the named session's key when the request was (3.3.5.2.4, 3.3.4.1.1),
// as clients that require signing reject an unsigned one.
#pragma once

#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// A binding attempt for a session of another connection (any worker):
// USER_SESSION_DELETED (no such session), ACCESS_DENIED (bad signature),
// INVALID_PARAMETER (unsigned, or another dialect), NOT_SUPPORTED (guest or
// anonymous session), REQUEST_NOT_ACCEPTED (a 2.x connection, or otherwise:
// no second channel).
NtStatus refuse_binding(Request& req);

// A SESSION_SETUP without the binding flag whose session is not in this
// connection's table: USER_SESSION_DELETED, signed when the request was
// signed with that session's key.
NtStatus refuse_foreign_session(Request& req);

}  // namespace ringsmb::smb2
