// Directory leases (MS-SMB2 3.3.1.4, 3.3.5.9.11): an SMB 3.x client may
// hold an RH lease on a directory (RqLs v2) to cache its listing. When an
// entry of the directory changes through this server (created, deleted,
// renamed, its data or attributes changed), the directory's leases lose R,
// which leaves RH nothing; the client that made the change through an open
// whose ParentLeaseKey names the lease keeps it. The break needs an
// acknowledgment (H) but nothing waits for it.
//
// Changes made by local processes on the server's disk are not seen here
// (docs/architecture.md, "Directory leases").
//
// Cost: every function returns after one relaxed atomic load while no
// directory is leased anywhere (FileTable::directory_leases_held()), so the
// small-file path pays no syscall for it.
#pragma once

#include <string>

#include "smb2/server_context.hpp"
#include "state/session.hpp"

namespace ringsmb::smb2 {

// The entries of the directory open as DIRFD (any kind of descriptor)
// changed; CLIENT made the change, through an open whose ParentLeaseKey is
// PARENT_KEY (null: none).
void break_directory_leases(ServerContext& server, int dirfd, const state::Guid& client,
                            const state::Guid* parent_key);

// The same for the directory holding PATH (relative to the share root ROOT_FD).
void break_parent_directory_leases(ServerContext& server, int root_fd, const std::string& path,
                                   const state::Guid& client, const state::Guid* parent_key);

// The ParentLeaseKey an open's changes carry (its v2 lease's), or null.
const state::Guid* parent_lease_key(const state::Open& open);

}  // namespace ringsmb::smb2
