// transport::Worker: how a connection's bytes come in when they do not
// simply come through the reactor (transport/conn_reader.hpp has the
// states): pausing and resuming, the requests held behind the login
// throttle or the connection's large WRITEs, the rest of large frames
// received off the worker, and the move to the bulk worker.
#include <algorithm>

#include "common/log.hpp"
#include "smb2/engine/processor.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {
namespace {

// A connection that moved here counts in this worker's counters: the
// share and user slots of its sessions and trees are this worker's.
void rebind_metrics(smb2::ConnState& s, smb2::WorkerMetrics& m) {
  s.metrics = &m;
  for (auto& [sid, session] : s.tables->sessions) {
    if (session->metrics_slot != smb2::kNoScope) session->metrics_slot = m.users.slot(session->user);
    for (auto& [tid, tree] : session->trees)
      if (tree->metrics_slot != smb2::kNoScope) tree->metrics_slot = m.shares.slot(tree->share.name);
  }
}

}  // namespace

// REST (bytes after the last frame handled) waits in the backlog. The
// commit path has none: it pauses at the end of its frame.
void Worker::pause_reading(Conn& c, ByteSpan rest) {
  c.reader.backlog.insert(c.reader.backlog.end(), rest.begin(), rest.end());
  c.reader.pause();
}

// Once half of the bound has gone out, the backlog is framed (it may pause
// again) and the reactor receives again. A loop, not recursion through
// flush(): a client that reads fast may empty the queue at every pause.
// Not while the BulkReceiver fills the frame buffer (the reader is not
// Paused then): its end comes back here.
void Worker::maybe_resume_reading(Conn& c) {
  size_t limit = ctx_.config.global.max_send_queue_bytes;
  while (c.reader.state() == ConnReader::State::Paused && !c.closing && !c.reader.waits_for_writes &&
         !c.moving_to && queued_bytes(c) <= limit / 2) {
    c.state.credits_throttled = false;
    c.reader.begin_resume();
    Bytes backlog = std::exchange(c.reader.backlog, {});
    if (!backlog.empty())
      after_framing(c, c.framer.feed(backlog, [&](ByteSpan frame) { return process_one(c, frame); }), backlog);
    if (c.closing) break;
    c.reader.end_resume();
    send_pending(c);
  }
}

// Keeps FRAME, in order, until the login hold ends or the connection's
// WRITEs are done.
FrameAssembler::Next Worker::hold_request(Conn& c, ByteSpan frame) {
  // Requests behind a held SESSION_SETUP wait for it, so that pipelining
  // does not get around the throttle. A client has no reason to send
  // much meanwhile: more than kMaxHeldRequestBytes drops the connection.
  if (held(c) && c.reader.held_requests.size() + frame.size() > kMaxHeldRequestBytes) {
    LOG_INFO("%s: too many requests while a login answer is held", c.state.client_address.c_str());
    return FrameAssembler::Next::Stop;
  }
  c.reader.hold(frame);
  // Behind WRITEs, nothing more is read until they are done: what is held
  // is the one frame (and what was already received stays in the backlog).
  return c.reader.waits_for_writes && !held(c) ? FrameAssembler::Next::Pause : FrameAssembler::Next::Continue;
}

void Worker::arm_hold(Conn& c) { due_.add(c.state.hold_replies_until_ms, c.id, {}); }

void Worker::release_hold(uint64_t conn_id) {
  Conn* c = receiving_conn(conn_id);
  if (!c || !held(*c)) return;
  if (smb2::monotonic_ms() < c->state.hold_replies_until_ms) return arm_hold(*c);  // extended meanwhile
  c->state.hold_replies_until_ms = 0;
  flush(*c);
  if (c->reader.waits_for_writes && c->state.writes_in_flight) return;  // the WRITEs' end runs them
  run_held_requests(*c);
}

// The requests that waited, in order; one of them may set a new hold (or
// go behind a new WRITE), and process_one then keeps the rest back again.
void Worker::run_held_requests(Conn& c) {
  Bytes waiting = c.reader.take_held();
  for (size_t at = 0; at + 4 <= waiting.size() && !c.closing;) {
    size_t len = FrameAssembler::frame_length(waiting.data() + at);
    FrameAssembler::Next next = process_one(c, ByteSpan(waiting.data() + at + 4, len));
    at += 4 + len;
    if (next == FrameAssembler::Next::Stop) return drop(c, "protocol error");
    if (next == FrameAssembler::Next::Pause) {
      // Over the send-queue bound, or behind new WRITEs: the rest waits in
      // the backlog, ahead of anything received after it.
      c.reader.backlog.insert(c.reader.backlog.begin(), waiting.begin() + ptrdiff_t(at), waiting.end());
      pause_reading(c, {});
      break;
    }
  }
  flush(c);
}

// N bytes went straight into the frame buffer (the reactor's recv or the
// BulkReceiver's).
void Worker::count_in_place(Conn& c, size_t n) {
  c.last_activity_s = now_s();
  c.bytes_received += n;
  c.bytes_received_in_place += n;
  metrics_.bytes_received += n;
}

// Frames the N bytes written at the framer's recv_space() or header_space().
void Worker::commit_in_place(Conn& c, size_t n) {
  after_framing(c, c.framer.commit(n, [&](ByteSpan frame) { return process_one(c, frame); }), {});
}

// A large frame's rest goes to the BulkReceiver once the reactor has
// stopped receiving on the socket (at once with epoll; with io_uring when
// the cancelled multishot recv has posted its last completion, whose
// bytes are framed here first).
void Worker::maybe_receive_off_worker(Conn& c) {
  if (!bulk_ || !c.reader.reading() || c.closing) return;
  if (c.framer.recv_space(kRecvOffWorkerMin).empty()) return;
  c.reader.stop_for_off_worker();
  if (reactor_->recv_stopped(c.id)) start_off_worker_receive(c);
}

void Worker::on_recv_stopped(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it != conns_.end() && it->second->moving_to) return maybe_send_over(*it->second);
  if (it == conns_.end() || !it->second->reader.stopping()) return;
  start_off_worker_receive(*it->second);
}

// What arrived while the reactor stopped may have completed the frame (or
// paused reading): then the reactor receives again.
void Worker::start_off_worker_receive(Conn& c) {
  std::span<uint8_t> rest = c.framer.recv_space(1);
  if (c.closing || c.reader.paused() || rest.empty()) return end_off_worker_receive(c);
  c.reader.start_off_worker(ConnReader::Job::Body);
  c.reader.large_frame_len = c.framer.buffered() + rest.size() - FrameAssembler::kHeaderSize;
  bulk_->submit({c.id, c.fd, rest});
}

// After a large frame the client most likely sends another (a file copy
// streams WRITEs), and the reactor's multishot recv, once armed, would
// take that frame whole into its buffers, on the worker, before the
// worker could stop it: so the receiver also waits for the next header,
// and hands the socket back to the reactor only for a small frame. With
// room for a frame as long as the last large one, a large frame of up to
// that length comes back whole, not its header first: a client with one
// WRITE in flight (smbench --large) finds this frame's receive waiting
// for its next WRITE, and the receiver and the worker wake each other
// once per frame instead of twice.
void Worker::receive_next_header_off_worker(Conn& c) {
  c.reader.start_off_worker(ConnReader::Job::Header);
  std::span<uint8_t> whole;
  if (c.reader.large_frame_len >= kRecvOffWorkerMin) whole = c.framer.frame_space(c.reader.large_frame_len);
  if (!whole.empty()) return bulk_->submit({c.id, c.fd, whole, true, kRecvOffWorkerMin});
  bulk_->submit({c.id, c.fd, c.framer.header_space(), false});
}

void Worker::on_off_worker_done(const io::BulkReceiver::Done& d) {
  auto it = conns_.find(d.conn_id);
  if (it != conns_.end()) run_off_worker_done(*it->second, d);
}

// The frame is whole (or the stream ended): it is handled here, and with
// the next frame's header already in, a large next frame goes straight
// back to the receiver, the reactor still stopped.
void Worker::run_off_worker_done(Conn& c, const io::BulkReceiver::Done& d) {
  // Stopping again: the framer is ours, the reactor still stopped (and
  // maybe_resume_reading leaves it so until end_off_worker_receive).
  c.reader.off_worker_done();
  if (!c.closing && d.received) {
    count_in_place(c, d.received + d.header_len);
    metrics_.bytes_received_off_worker += d.received + d.header_len;
    commit_in_place(c, d.received);
  }
  if (!c.closing && d.header_len) {
    ByteSpan header(d.header, d.header_len);
    if (c.reader.paused()) {
      c.reader.backlog.insert(c.reader.backlog.end(), header.begin(), header.end());  // the framer paused at the frame's end
    } else {
      std::copy(header.begin(), header.end(), c.framer.header_space().begin());
      commit_in_place(c, header.size());
    }
  }
  if (!c.closing) flush(c);
  // A header job's frame may have come whole (frame_space).
  bool after_body = c.reader.job() == ConnReader::Job::Body || d.received > FrameAssembler::kHeaderSize;
  if (after_body) c.reader.off_worker_run += d.received;
  if (!d.failed && !c.closing && !c.reader.paused()) {
    if (!c.framer.recv_space(kRecvOffWorkerMin).empty()) return continue_off_worker(c, OffWorkerNext::Body);
    if (after_body && c.framer.missing_bytes() == 0) return continue_off_worker(c, OffWorkerNext::Header);
  }
  end_off_worker_receive(c);
}

// The stream of large frames goes on: here, or on the bulk worker once it
// is long enough.
void Worker::continue_off_worker(Conn& c, OffWorkerNext next) {
  if (bulk_target_ && c.reader.off_worker_run >= kMoveToBulkAfter && may_move(c)) return move_to_bulk(c, next);
  if (next == OffWorkerNext::Body) return start_off_worker_receive(c);
  receive_next_header_off_worker(c);
}

// The reactor receives again; after a failure or a drop it sees the
// stream's end and reports it (on_recv_end), which frees the connection.
// Paused meanwhile, it receives once the send queue has drained.
void Worker::end_off_worker_receive(Conn& c) {
  c.reader.end_off_worker();
  if (c.reader.paused()) maybe_resume_reading(c);
}

// Only a connection in a quiet state moves: nothing of it in this
// worker's reactor but its stopped receive (no send or wait for room), no
// replies or requests waiting here, and nothing registered with this
// worker's inotify source (CHANGE_NOTIFY, directory leases).
bool Worker::may_move(const Conn& c) const {
  return !c.closing && !c.waiting && c.out.empty() && c.pending.empty() && c.state.out_files.empty() &&
         !held(c) && !c.reader.waits_for_writes && c.reader.held_requests.empty() && c.reader.backlog.empty() &&
         !c.reader.paused() && (!c.state.notify || c.state.notify->by_open.empty()) &&
         !c.state.dir_lease_watches && c.state.async.ready.empty() && c.state.tables->members.size() <= 1;
}

// Runs on this worker: the connection leaves it whole. Its address stays
// (this worker's index): tasks posted to it are routed to the bulk worker
// from now on, and those already queued here are passed on (run_conn_task).
void Worker::move_to_bulk(Conn& c, OffWorkerNext next) { bulk_target_->arrive(leave(c), next); }

// The connection leaves this worker (for the bulk worker, or its client's
// session's worker for a binding or NEGOTIATE): out of its table and its
// reactor, counted as moved.
std::unique_ptr<Worker::Conn> Worker::leave(Conn& c) {
  auto it = conns_.find(c.id);
  std::unique_ptr<Conn> moving = std::move(it->second);
  conns_.erase(it);
  reactor_->release(moving->id);
  // Its sessions sign and seal on the worker it goes to from now on: their
  // keys' contexts go from this thread's table.
  if (moving->state.tables)
    for (const auto& entry : moving->state.tables->sessions) entry.second->forget_keys_here();
  moving->moved = true;
  ++metrics_.connections_moved;
  return moving;
}

// On the sending worker's thread. The route is set with the connection
// queued, under the lock posts take: a task routed here finds it adopted
// (on_wake adopts arrivals before it runs tasks).
void Worker::arrive(std::unique_ptr<Conn> conn, OffWorkerNext next, bool binding) {
  {
    std::lock_guard lock(posted_mu_);
    routes_->set(conn->id, this);
    arrivals_.push_back({std::move(conn), next, binding});
  }
  reactor_->wake();
}

// A connection moved here from another worker (to a bulk worker, or to
// its client's session's for a binding or NEGOTIATE) joins this one: its
// metrics, change feed and reactor become this worker's. Null when the reactor cannot watch it:
// it is then ended as a lost connection.
Worker::Conn* Worker::take_in(std::unique_ptr<Conn> conn) {
  Conn& c = *conn;
  rebind_metrics(c.state, metrics_);
  c.state.changes = &changes_;
  c.state.local_conns = this;
  c.reader.moved_to(*reactor_);
  conns_.emplace(c.id, std::move(conn));
  if (reactor_->adopt(c.id, c.fd)) return &c;
  c.reader.lost();
  c.closing = c.recv_ended = true;
  maybe_destroy(c);
  return nullptr;
}

// On this (the bulk) worker's thread: the connection goes on where it
// stopped, its stream of large frames received by this worker's receiver.
void Worker::adopt(std::unique_ptr<Conn> conn, OffWorkerNext next) {
  Conn* taken = take_in(std::move(conn));
  if (!taken) return;
  Conn& c = *taken;
  if (!bulk_) return end_off_worker_receive(c);
  if (next == OffWorkerNext::Body) return start_off_worker_receive(c);
  receive_next_header_off_worker(c);
}

}  // namespace ringsmb::transport
