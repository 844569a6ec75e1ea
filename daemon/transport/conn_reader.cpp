#include "transport/conn_reader.hpp"

#include "common/assert.hpp"
#include "transport/direct_tcp.hpp"

namespace ringsmb::transport {

void ConnReader::pause() {
  switch (state_) {
    case State::Reading:
      state_ = State::Paused;
      reactor_->pause_recv(conn_id_);
      break;
    case State::Resuming: state_ = State::Paused; break;  // the reactor was not resumed yet
    case State::Stopping: state_ = State::StoppingPaused; break;
    case State::OffWorker: state_ = State::OffWorkerPaused; break;
    case State::Paused:
    case State::StoppingPaused:
    case State::OffWorkerPaused: break;
  }
}

void ConnReader::begin_resume() {
  RINGSMB_ASSERT(state_ == State::Paused);
  state_ = State::Resuming;
}

void ConnReader::end_resume() {
  if (state_ != State::Resuming) return;  // paused again by the backlog's frames
  state_ = State::Reading;
  reactor_->resume_recv(conn_id_);
}

void ConnReader::stop_for_off_worker() {
  RINGSMB_ASSERT(state_ == State::Reading);
  state_ = State::Stopping;
  reactor_->pause_recv(conn_id_);
}

void ConnReader::start_off_worker(Job job) {
  RINGSMB_ASSERT(state_ == State::Stopping);
  state_ = State::OffWorker;
  job_ = job;
}

void ConnReader::off_worker_done() {
  RINGSMB_ASSERT(receiving_off_worker());
  state_ = state_ == State::OffWorkerPaused ? State::StoppingPaused : State::Stopping;
}

void ConnReader::end_off_worker() {
  RINGSMB_ASSERT(stopping());
  off_worker_run = 0;
  if (state_ == State::StoppingPaused) {
    state_ = State::Paused;  // resumed once the send queue has drained (Worker::maybe_resume_reading)
    return;
  }
  state_ = State::Reading;
  reactor_->resume_recv(conn_id_);
}

void ConnReader::unpause_to_close() {
  switch (state_) {
    case State::Paused:
    case State::Resuming:
      state_ = State::Reading;
      reactor_->resume_recv(conn_id_);
      break;
    case State::StoppingPaused: state_ = State::Stopping; break;
    case State::OffWorkerPaused: state_ = State::OffWorker; break;
    case State::Reading:
    case State::Stopping:
    case State::OffWorker: break;
  }
}

void ConnReader::hold(ByteSpan frame) {
  const DirectTcpFraming& framing = direct_tcp_framing();
  size_t start = framing.open(held_requests);
  held_requests.insert(held_requests.end(), frame.begin(), frame.end());
  framing.close(held_requests, start, 0);
}

Bytes ConnReader::take_held() {
  waits_for_writes = false;
  Bytes waiting;
  waiting.swap(held_requests);
  return waiting;
}

const char* to_string(ConnReader::State s) {
  switch (s) {
    case ConnReader::State::Reading: return "reading";
    case ConnReader::State::Paused: return "paused";
    case ConnReader::State::Resuming: return "resuming";
    case ConnReader::State::Stopping: return "stopping";
    case ConnReader::State::StoppingPaused: return "stopping, paused";
    case ConnReader::State::OffWorker: return "off worker";
    case ConnReader::State::OffWorkerPaused: return "off worker, paused";
  }
  return "?";
}

}  // namespace ringsmb::transport
