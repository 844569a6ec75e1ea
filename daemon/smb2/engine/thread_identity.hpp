// File operations run with the session user's Unix identity. The switch is
// per thread through the raw setfsuid/setfsgid/setgroups syscalls: glibc's
// wrappers would change every thread of the process.
#pragma once

#include "ipc/control_plane.hpp"

namespace ringsmb::smb2 {

// Makes this thread's file-system identity `user`'s (a no-op when it
// already is, or when the daemon does not run as root).
void become_user(const ipc::UnixUser& user);
// Back to the daemon's own identity (root), e.g. for share-root opens.
void become_root();

// Gives the thread back the identity it had when this was made: for work
// done as another user in the middle of a request (a kept durable open
// closed by a break, smb2/durable/durable.cpp).
class RestoreIdentity {
 public:
  RestoreIdentity();
  ~RestoreIdentity();
  RestoreIdentity(const RestoreIdentity&) = delete;
  RestoreIdentity& operator=(const RestoreIdentity&) = delete;

 private:
  bool known_ = false;
  ipc::UnixUser saved_;
};

// The hooks of work the server does for a request in places only root may
// reach (stream sidecars, vfs/stream_sidecar.hpp): switch this thread to
// root, and back to the identity it had. Not nested.
void enter_server_identity();
void leave_server_identity();

}  // namespace ringsmb::smb2
