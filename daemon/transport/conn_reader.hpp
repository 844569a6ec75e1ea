// Who receives a connection's bytes, and what waits: one connection's
// receive state, with its transitions named here and nowhere else
// (transport::Worker decides when, this class what each one does to the
// reactor).
//
//   Reading ──pause──> Paused ──begin_resume──> Resuming ──end_resume──> Reading
//      │                                          └──pause──> Paused
//      └─stop_for_off_worker─> Stopping ──start_off_worker──> OffWorker
//                                 ^  └──end_off_worker──> Reading     │
//                                 └───────────off_worker_done─────────┘
//
// A pause while the reactor is stopped for the BulkReceiver (Stopping,
// OffWorker) is kept as StoppingPaused / OffWorkerPaused: the receiver
// goes on, and when it hands the socket back the reactor stays paused
// (Paused) until the send queue has drained.
//
// Orthogonal to these, requests may wait without being run: behind the
// login throttle's hold (smb2::ConnState::hold_replies_until_ms, set by
// SESSION_SETUP; receiving goes on) or behind the connection's large
// WRITEs in flight (waits_for_writes; receiving pauses). Both keep the
// frames in held_requests, in order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bytes.hpp"
#include "io/reactor.hpp"

namespace ringsmb::transport {

class ConnReader {
 public:
  enum class State : uint8_t {
    Reading,          // the reactor receives; frames run as they come
    Paused,           // the reactor is paused (send queue over its bound, or behind WRITEs)
    Resuming,         // the backlog is framed; the reactor still paused
    Stopping,         // the reactor's receive ends, or the worker frames what the receiver brought
    StoppingPaused,   // Stopping, paused meanwhile
    OffWorker,        // the BulkReceiver fills the frame buffer (a frame's rest, or the next header)
    OffWorkerPaused,  // OffWorker, paused meanwhile
  };
  // What the BulkReceiver's job in OffWorker receives.
  enum class Job : uint8_t { Body, Header };

  ConnReader(io::Reactor& reactor, uint64_t conn_id) : reactor_(&reactor), conn_id_(conn_id) {}

  State state() const { return state_; }
  // Bytes that arrive now wait in the backlog.
  bool paused() const {
    return state_ == State::Paused || state_ == State::StoppingPaused || state_ == State::OffWorkerPaused;
  }
  // The reactor receives (and may receive in place).
  bool reading() const { return state_ == State::Reading; }
  // The BulkReceiver owns the socket and the frame buffer.
  bool receiving_off_worker() const { return state_ == State::OffWorker || state_ == State::OffWorkerPaused; }
  // The reactor is stopped for the BulkReceiver (its receive ending, or ended).
  bool stopping() const { return state_ == State::Stopping || state_ == State::StoppingPaused; }
  Job job() const { return job_; }

  // Reading, Resuming, Stopping, OffWorker -> their paused state. The
  // reactor is paused only when it was receiving.
  void pause();
  // Paused -> Resuming: the worker frames the backlog (which may pause again).
  void begin_resume();
  // Resuming -> Reading: the reactor receives again. Paused stays.
  void end_resume();
  // Reading -> Stopping: the reactor stops receiving (at once with epoll;
  // with io_uring at on_recv_stopped).
  void stop_for_off_worker();
  // Stopping -> OffWorker, the receiver's JOB submitted by the caller.
  void start_off_worker(Job job);
  // OffWorker(Paused) -> Stopping(Paused): the receiver's job is done.
  void off_worker_done();
  // Stopping -> Reading (the reactor receives again); StoppingPaused ->
  // Paused (the reactor stays paused). The run of large frames ends.
  void end_off_worker();
  // The connection is being dropped: its reactor must be receiving to see
  // the stream's end. Paused, Resuming -> Reading (resumed); the paused
  // off-worker states lose their pause (end_off_worker resumes later).
  void unpause_to_close();
  // The connection moved to another worker: REACTOR adopted its socket
  // (paused); the state stays Stopping.
  void moved_to(io::Reactor& reactor) { reactor_ = &reactor; }
  // The new reactor could not take the socket: nothing receives any more.
  void lost() { state_ = State::Reading; }

  // Bytes received after a pause (from a frame boundary), framed on resume.
  Bytes backlog;
  // The last frame was large: the next header is read in place too.
  bool last_frame_large = false;
  // The length of the last frame whose rest went to the BulkReceiver: the
  // room its next header job gives a frame to come whole.
  size_t large_frame_len = 0;
  // Bytes of large frames in a row received off the worker (the move to a
  // bulk worker, Worker::kMoveToBulkAfter).
  uint64_t off_worker_run = 0;

  // Requests that wait (the login hold or waits_for_writes), each with its
  // 4-byte header, in order.
  Bytes held_requests;
  // A request waits for the connection's WRITEs in flight: nothing more is
  // read (paused) until they are done and the held requests have run.
  bool waits_for_writes = false;
  // Appends FRAME to held_requests.
  void hold(ByteSpan frame);
  // Hands the held requests over, in order, with waits_for_writes ended.
  Bytes take_held();

 private:
  io::Reactor* reactor_;
  uint64_t conn_id_;
  State state_ = State::Reading;
  Job job_ = Job::Body;
};

const char* to_string(ConnReader::State s);

}  // namespace ringsmb::transport
