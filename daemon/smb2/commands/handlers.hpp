// The SMB2 command handlers and what they share with the features above
// the engine: closing an open, ending a tree connect or a session.
#pragma once

#include <memory>

#include "smb2/engine/dispatch.hpp"
#include "smb2/files/close_open.hpp"

namespace ringsmb::smb2 {

// The handlers of the dispatch table (command_table.cpp), one file each.
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
// IOCTL's CommandSpec::open_optional: FSCTLs that take no open.
bool ioctl_takes_no_open(const Request&);

// Closes an open (share-mode release, delete-on-close) and forgets it
// (smb2/files/close_open.hpp).
void close_open(Request& req, state::Open* open);
// Ends tree connect TREE_ID of SESSION as TREE_DISCONNECT does: its opens
// close oldest first, its waiting requests are withdrawn, the control plane
// is told, and the TreeId is forgotten (a later request on it gets
// NETWORK_NAME_DELETED).
void disconnect_tree(ConnState& conn, ServerContext& server, state::Session& session, uint32_t tree_id);
// Ends session S (LOGOFF, a failed re-authentication): closes its opens
// oldest first, withdraws its waiting requests; the session object is
// erased after the current frame.
void end_session(Request& req, state::Session& s);

}  // namespace ringsmb::smb2
