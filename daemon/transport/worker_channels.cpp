// transport::Worker: the hand-over of a connection to another worker
// before a frame runs (docs/internals-sessions.md "Multichannel"): a NEGOTIATE
// of a client whose other connections are served there, and a binding
// (MS-SMB2 3.3.5.5) to a session held there. All channels of a session
// share its tables on one worker, so the connection goes there, as a
// connection moves to a bulk worker, and the frame runs there.
#include "common/log.hpp"
#include "smb2/engine/processor.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {

// The worker that serves address TO now (it may have moved to a bulk worker).
Worker* Worker::serving(const state::ConnAddress& to) const {
  if (Worker* moved = routes_ ? routes_->moved_to(to.conn_id) : nullptr) return moved;
  return peers_ && to.worker < peers_->size() ? (*peers_)[to.worker].get() : nullptr;
}

// Only a connection that is nothing but itself moves: it shares no
// tables, nothing of it waits here or is registered with this worker's
// inotify source, and its frames run as they come.
bool Worker::may_hand_over(const Conn& c) const {
  const smb2::ConnState& s = c.state;
  return !c.closing && s.tables->members.size() <= 1 && s.async.waiting.empty() && s.async.ready.empty() &&
         s.writes_in_flight == 0 && !held(c) && c.reader.reading() && c.reader.held_requests.empty() &&
         (!s.notify || s.notify->by_open.empty()) && !s.dir_lease_watches;
}

// FRAME (the binding or NEGOTIATE) waits in held_requests and nothing
// more is read; the connection leaves once the reactor's receive has
// stopped and its replies have gone out (maybe_send_over). When it cannot
// move, the frame runs here: a binding is refused, a NEGOTIATE answered.
FrameAssembler::Next Worker::hand_over(Conn& c, ByteSpan frame) {
  Worker* to = serving(*std::exchange(c.state.move_to, std::nullopt));
  if (!to || to == this || !may_hand_over(c)) {
    c.state.move_declined = true;
    smb2::FrameResult fr = smb2::process_frame(c.state, ctx_, frame, c.pending);
    c.state.move_declined = false;
    if (fr == smb2::FrameResult::Hold) {  // behind the connection's WRITEs, as in process_one
      c.reader.waits_for_writes = true;
      return hold_request(c, frame);
    }
    return fr == smb2::FrameResult::Ok ? FrameAssembler::Next::Continue : FrameAssembler::Next::Stop;
  }
  c.moving_to = to;
  c.reader.hold(frame);
  return FrameAssembler::Next::Pause;
}

void Worker::maybe_send_over(Conn& c) {
  if (c.closing || !c.moving_to || !reactor_->recv_stopped(c.id)) return;
  if (c.waiting || !c.out.empty() || !c.pending.empty() || !c.state.out_files.empty()) return;  // on_send comes back
  Worker* to = std::exchange(c.moving_to, nullptr);
  to->arrive(leave(c), OffWorkerNext::Body, true);
}

// On this worker's thread: the held frame runs here, then what came after it.
void Worker::adopt_channel(std::unique_ptr<Conn> conn) {
  Conn* taken = take_in(std::move(conn));
  if (!taken) return;
  Conn& c = *taken;
  LOG_DEBUG("%s: moved to worker %d, where its client's session lives", c.state.client_address.c_str(), index_);
  run_held_requests(c);
  if (!c.closing) maybe_resume_reading(c);
}

}  // namespace ringsmb::transport
