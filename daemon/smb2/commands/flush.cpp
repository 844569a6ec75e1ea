// SMB2 FLUSH (MS-SMB2 2.2.17, 2.2.18, 3.3.5.11). fsync can take seconds
// when much data is dirty, so it runs on the server's blocking pool: the
// request goes async and its response is posted back to the connection's
// worker. Most fsyncs take a millisecond or less, so the interim
// STATUS_PENDING (3.3.4.2) is held back for kInterimDelayMs: a FLUSH done
// by then gets one ordinary response. An interim for every FLUSH doubled
// the packets of the Linux kernel client's per-file close and made its
// `tar x` 2.2x slower in the tests/vm guest (docs/PERFORMANCE.md). Inside a compound
// (not its last element), over the waiting limits, or without a pool
// (unit tests), the fsync runs inline as before. On tmpfs and ramfs there
// is no fsync at all (nothing_to_sync).
#include <unistd.h>

#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {
namespace {

// The FLUSH response body (2.2.18): StructureSize 4, Reserved.
constexpr uint8_t kFlushResponse[4] = {4, 0, 0, 0};

// fsync of FD as an NTSTATUS; EINVAL and EBADF (a file that cannot be
// synced, a pipe) count as done, as they did on the worker.
NtStatus fsync_status(int fd) {
  if (fsync(fd) == 0 || errno == EINVAL || errno == EBADF) return NtStatus::Success;
  return nt_status_from_errno(errno);
}

constexpr int64_t kInterimDelayMs = 5;

// A file of a filesystem in memory (tmpfs, ramfs) has nothing to write
// back: Linux's fsync there is noop_fsync, which returns 0 and does
// nothing else, so the FLUSH makes no system call at all (the Linux client
// FLUSHes every file whose times it sets while it holds a lease, and in a
// virtual machine every system call is dear). A named stream is kept
// elsewhere (vfs/stream_store.hpp) and is synced as before.
bool nothing_to_sync(const Request& req, const state::Open& open) {
  return req.tree->memory_fs_device && !open.stream && open.node &&
         open.node->device == req.tree->memory_fs_device;
}

bool may_flush_async(const Request& req, const state::Open& open) {
  return open.fd.get() >= 0 && req.server.blocking && req.hdr.next_command == 0 && has_room_to_wait(req);
}

// Starts the fsync of OPEN on the blocking pool; STATUS_PENDING, or a
// status when it could not be started (then nothing was submitted).
NtStatus flush_async(Request& req, const state::Open& open) {
  NtStatus st;
  int fd = start_pool_wait(req, open, WaitKind::Flush, kInterimDelayMs, st);  // its own descriptor keeps the file
  if (fd < 0) return st;
  ServerContext& server = req.server;
  server.blocking->submit([&server, to = req.conn.address, id = req.async_id, fd] {
    NtStatus status = fsync_status(fd);
    close(fd);
    post_to_conn(server, to, [id, status](ConnState& conn, Bytes&) { complete(conn, id, status, kFlushResponse); });
  });
  return NtStatus::Pending;
}

}  // namespace

NtStatus handle_flush(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(8);
  r.skip(16);  // FileId: Request::open
  state::Open* open = req.open;
  if (NtStatus s = check_change(*req.tree, *open, Change::WriteData); s != NtStatus::Success) return s;
  update_write_time_now(*open);  // a pending LastWriteTime update happens now
  if (nothing_to_sync(req, *open)) {
    w.bytes(kFlushResponse);
    return NtStatus::Success;
  }
  if (may_flush_async(req, *open)) return flush_async(req, *open);
  if (NtStatus s = fsync_status(open->fd.get()); s != NtStatus::Success) return s;
  w.bytes(kFlushResponse);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
