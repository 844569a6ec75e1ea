// Large WRITEs off the worker (smb2/commands/write.cpp). A WRITE alone in its frame
// with at least ServerContext::async_write_min bytes goes async: its pwrite
// runs on the blocking pool, on the connection's write lane (one after the
// other, in arrival order), and it answers when the pwrite is done (the
// interim STATUS_PENDING only if that takes longer than a few ms, as for
// FLUSH). The worker meanwhile serves its other connections: a pwrite that
// the kernel throttles (balance_dirty_pages) sleeps on a pool thread.
//
// Ordering: while such a WRITE is in flight, no later request of the same
// connection runs before it is done (a READ, FLUSH, CLOSE, SET_INFO of that
// open must see the data), except further WRITEs that go to the same lane:
// process_frame() answers FrameResult::Hold for anything else, and the
// transport keeps that frame and the ones after it until the connection's
// writes are done. Other connections' requests are not ordered with a
// WRITE that has not been answered, as with any server that runs requests
// in parallel.
#pragma once

#include <unistd.h>

#include <memory>

#include "common/blocking_pool.hpp"
#include "common/bytes.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// The start shared by the requests whose system call runs on the blocking
// pool (FLUSH's fsync, a large WRITE's pwrite): registers REQ as waiting on
// OPEN as KIND, with its interim response held back for DELAY_MS and a
// withdraw hook that leaves it running (a system call cannot be stopped;
// a lost connection drops the posted answer), and dups the open's
// descriptor for the job (the open may be closed while it runs). Returns
// the descriptor, or -1 with STATUS set (then nothing is registered).
int start_pool_wait(Request& req, const state::Open& open, WaitKind kind, int64_t delay_ms, NtStatus& status);

// A job on the connection's write lane, as a large WRITE's pwrite:
// WORK(fd) runs on the pool with a duplicate of OPEN's descriptor, then
// FINISH(conn, async_id, status) answers on the connection's worker. Until
// then the connection's later requests wait (FrameResult::Hold), so they
// see the result. PENDING, or start_pool_wait's refusal.
template <class Work, class Finish>
NtStatus run_on_write_lane(Request& req, const state::Open& open, int64_t interim_delay_ms, Work work,
                           Finish finish) {
  NtStatus st;
  int fd = start_pool_wait(req, open, WaitKind::Write, interim_delay_ms, st);
  if (fd < 0) return st;
  ConnState& conn = req.conn;
  if (!conn.write_lane) conn.write_lane = std::make_shared<BlockingPool::Lane>();
  ServerContext& server = req.server;
  server.blocking->submit(conn.write_lane, [&server, to = conn.address, id = req.async_id, fd, work, finish] {
    NtStatus status = work(fd);
    close(fd);
    post_to_conn(server, to, [id, status, finish](ConnState& c, Bytes&) { finish(c, id, status); });
  });
  ++conn.writes_in_flight;  // answered through this thread's posted tasks: never before this
  return NtStatus::Pending;
}

// The identity of OPEN's tree for the worker thread: what a completion
// posted from the pool does as the request's user (the worker's identity
// now is whatever ran last), e.g. put a frozen LastWriteTime back.
void become_owner_of(ConnState& conn, const state::Open& open);

// Would a WRITE of LENGTH bytes through OPEN, by session SESSION_ID on
// CONN, go to the blocking pool? Both process_frame (to let it
// past the writes in flight) and the WRITE handler ask this.
bool write_goes_async(const ConnState& conn, const ServerContext& server, const state::Open& open,
                      uint32_t length, uint64_t session_id);

// May CHAIN (an SMB2 message, decrypted) run while CONN has WRITEs in
// flight? Only a lone WRITE that goes async too (write_goes_async).
bool runs_beside_writes(const ConnState& conn, const ServerContext& server, ByteSpan chain);

// Could a message of SIZE bytes (an encrypted frame's OriginalMessageSize,
// not decrypted yet) be such a WRITE, from its size alone? False when it
// is too small to carry async_write_min bytes, or when its data (all but
// the WRITE's header and body, no padding) would pass the bytes allowed
// in flight: then it waits without being decrypted first.
bool may_run_beside_writes(const ConnState& conn, const ServerContext& server, size_t size);

}  // namespace ringsmb::smb2
