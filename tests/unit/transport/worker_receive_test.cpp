// transport::Worker's receive states over the fake reactor and a fake
// BulkReceiver: the pause on the send-queue bound and the resume, the
// login throttle's hold, the hold behind large WRITEs, a large frame
// received off the worker, and the move to a bulk worker, whose reactor
// then receives the small frames.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "transport/worker_fixture.hpp"

using namespace ringsmb;
using namespace ringsmb::transport;
using namespace ringsmb::test;
using State = ConnReader::State;

namespace {

// A worker with a fake BulkReceiver, its connection logged in (large
// frames are taken only then) and its frame cap lifted by a first frame.
struct BulkFixture : WorkerFixture {
  FakeBulkReceiver* bulk = nullptr;
  BulkFixture() {
    auto b = std::make_unique<FakeBulkReceiver>();
    bulk = b.get();
    worker->use_bulk_receiver(std::move(b));
    worker->conn_state(conn)->logged_in = true;
    worker->on_recv(conn, echo_frame());
    REQUIRE(reply_commands(read_peer()).size() == 1);
  }
};

// Completes WORKER's off-worker JOB with the rest of FRAME (from AT), and
// NEXT_HEADER (4 bytes, or none) of the frame after it.
void complete(Worker& worker, const io::BulkReceiver::Job& job, const Bytes& frame, size_t at,
              const Bytes& next_header) {
  REQUIRE(job.body.size() == frame.size() - at);
  std::memcpy(job.body.data(), frame.data() + at, job.body.size());
  io::BulkReceiver::Done d;
  d.conn_id = job.conn_id;
  d.received = job.body.size();
  if (!next_header.empty()) std::memcpy(d.header, next_header.data(), next_header.size());  // data() of none may be null
  d.header_len = next_header.size();
  worker.on_off_worker_done(d);
}

Bytes header_of(const Bytes& frame) { return Bytes(frame.begin(), frame.begin() + 4); }

}  // namespace

TEST_CASE("worker: over the send-queue bound the reactor pauses once, and resumes when it drained",
          "[transport][worker][conn_reader]") {
  WorkerFixture f;
  f.ctx.config.global.max_send_queue_bytes = 1;  // any queued reply is over it
  size_t junk = f.fill_socket();
  Bytes two = echo_frame();
  Bytes second = echo_frame(0, 1);
  two.insert(two.end(), second.begin(), second.end());
  f.worker->on_recv(f.conn, two);  // the first reply waits for room; the second request for the reply
  CHECK(f.worker->reader(f.conn)->state() == State::Paused);
  CHECK(f.reactor->paused == std::vector{f.conn});
  CHECK(f.worker->reader(f.conn)->backlog == second);
  REQUIRE(f.reactor->sends.size() == 1);
  f.drain(junk);
  msghdr* msg = f.reactor->sends[0].msg;
  ssize_t n = send(f.server_fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, MSG_DONTWAIT);
  REQUIRE(n > 0);
  f.worker->on_send(f.conn, int(n));  // the backlog runs; its reply goes out inline
  CHECK(reply_commands(f.read_peer()).size() == 2);
  CHECK(f.worker->reader(f.conn)->reading());
  CHECK(f.reactor->paused == std::vector{f.conn});  // paused again in between, without a second pause_recv
  CHECK(f.reactor->resumed == std::vector{f.conn});
}

TEST_CASE("worker: behind the login hold requests wait, receiving goes on, and the release runs them",
          "[transport][worker][conn_reader]") {
  WorkerFixture f;
  smb2::ConnState* state = f.worker->conn_state(f.conn);
  state->hold_replies_until_ms = INT64_MAX;  // as a throttled SESSION_SETUP sets it
  f.worker->on_recv(f.conn, echo_frame());
  f.worker->on_recv(f.conn, echo_frame(0, 1));
  CHECK(f.read_peer().empty());
  CHECK(f.worker->reader(f.conn)->reading());
  CHECK(f.reactor->paused.empty());
  CHECK(f.worker->reader(f.conn)->held_requests.size() == 2 * echo_frame().size());
  // A task may end the hold early (smb2::end_previous_session does).
  f.worker->post(f.conn, [](smb2::ConnState& s, Bytes&) { s.hold_replies_until_ms = 1; });
  f.worker->on_wake();
  CHECK(reply_commands(f.read_peer()).size() == 2);
  CHECK(f.worker->reader(f.conn)->held_requests.empty());
}

TEST_CASE("worker: a request behind large WRITEs pauses the reactor until they are done",
          "[transport][worker][conn_reader]") {
  WorkerFixture f;
  f.worker->conn_state(f.conn)->writes_in_flight = 1;
  Bytes two = echo_frame();
  Bytes second = echo_frame(0, 1);
  two.insert(two.end(), second.begin(), second.end());
  f.worker->on_recv(f.conn, two);
  const ConnReader* r = f.worker->reader(f.conn);
  CHECK(r->waits_for_writes);
  CHECK(r->state() == State::Paused);
  CHECK(r->backlog == second);  // not framed: only the first request waits in held_requests
  CHECK(f.reactor->paused == std::vector{f.conn});
  CHECK(f.read_peer().empty());
  // The last WRITE's completion (a posted task) runs what waited.
  f.worker->post(f.conn, [](smb2::ConnState& s, Bytes&) { s.writes_in_flight = 0; });
  f.worker->on_wake();
  CHECK(reply_commands(f.read_peer()).size() == 2);
  CHECK_FALSE(r->waits_for_writes);
  CHECK(r->reading());
  CHECK(f.reactor->resumed == std::vector{f.conn});
}

TEST_CASE("worker: a large frame's rest is received off the worker; a small next frame goes back to the reactor",
          "[transport][worker][conn_reader]") {
  BulkFixture f;
  Bytes large = echo_frame(1 << 20, 1);
  f.worker->on_recv(f.conn, ByteSpan(large).first(1000));
  CHECK(f.worker->reader(f.conn)->state() == State::Stopping);
  CHECK(f.reactor->paused == std::vector{f.conn});
  CHECK(f.bulk->jobs.empty());  // io_uring: not before the reactor's receive has ended
  f.worker->on_recv_stopped(f.conn);
  REQUIRE(f.bulk->jobs.size() == 1);
  CHECK(f.worker->reader(f.conn)->receiving_off_worker());
  CHECK(f.worker->recv_space(f.conn).empty());  // the framer is the receiver's
  Bytes small = echo_frame(0, 2);
  complete(*f.worker, f.bulk->jobs[0], large, 1000, header_of(small));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
  CHECK(f.worker->reader(f.conn)->reading());
  CHECK(f.reactor->resumed == std::vector{f.conn});
  CHECK(f.worker->metrics().bytes_received_off_worker == large.size() - 1000 + 4);
  f.worker->on_recv(f.conn, ByteSpan(small).subspan(4));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: a stream of large frames moves to the bulk worker, whose reactor takes the small ones",
          "[transport][worker][conn_reader]") {
  BulkFixture f;
  f.reactor->stopped_at_once = true;  // as epoll: no on_recv_stopped
  Worker bulk_worker(1, f.ctx);
  auto r = std::make_unique<FakeReactor>();
  FakeReactor& bulk_reactor = *r;
  bulk_worker.use_reactor(std::move(r));
  auto b = std::make_unique<FakeBulkReceiver>();
  FakeBulkReceiver& bulk_receiver = *b;
  bulk_worker.use_bulk_receiver(std::move(b));
  ConnRoutes routes;
  f.worker->set_routes(&routes, &bulk_worker);
  bulk_worker.set_routes(&routes, nullptr);

  const size_t size = 1 << 20;  // ctx.max_write: five in a row are over kMoveToBulkAfter
  Bytes large = echo_frame(size, 1);
  f.worker->on_recv(f.conn, ByteSpan(large).first(4));
  REQUIRE(f.bulk->jobs.size() == 1);
  size_t frames = 0;
  while (f.reactor->released.empty() && frames < 8) {
    Bytes frame = echo_frame(size, 1 + frames);  // the same length: its 4-byte header came with the last one
    complete(*f.worker, f.bulk->jobs.back(), frame, 4, header_of(frame));
    CHECK(reply_commands(f.read_peer()).size() == 1);
    ++frames;
  }
  CHECK(frames * (size - 4) >= kMoveToBulkAfter);
  CHECK(f.reactor->released == std::vector{f.conn});
  CHECK(f.reactor->resumed.empty());  // the reactor never took the socket back
  CHECK(f.worker->reader(f.conn) == nullptr);
  CHECK(f.worker->metrics().connections_moved == 1);
  CHECK(routes.moved_to(f.conn) == &bulk_worker);

  bulk_worker.on_wake();  // adopts it, paused, and its receiver goes on with the frame
  CHECK(bulk_reactor.adopted == std::vector{f.conn});
  REQUIRE(bulk_receiver.jobs.size() == 1);
  CHECK(bulk_worker.reader(f.conn)->receiving_off_worker());
  Bytes small = echo_frame(0, 2 + frames);
  complete(bulk_worker, bulk_receiver.jobs[0], echo_frame(size, 1 + frames), 4, header_of(small));
  CHECK(reply_commands(f.read_peer()).size() == 1);
  CHECK(bulk_worker.reader(f.conn)->reading());
  CHECK(bulk_reactor.resumed == std::vector{f.conn});
  bulk_worker.on_recv(f.conn, ByteSpan(small).subspan(4));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: after a large frame with no header behind it, the next large frame comes back whole",
          "[transport][worker][conn_reader]") {
  BulkFixture f;
  f.reactor->stopped_at_once = true;  // as epoll: no on_recv_stopped
  const size_t size = 512 * 1024;
  Bytes large = echo_frame(size, 1);
  f.worker->on_recv(f.conn, ByteSpan(large).first(4));
  REQUIRE(f.bulk->jobs.size() == 1);
  CHECK(f.bulk->jobs[0].frame_min == 0);
  complete(*f.worker, f.bulk->jobs[0], large, 4, {});  // one request in flight: nothing behind it yet
  CHECK(reply_commands(f.read_peer()).size() == 1);
  // Its next job has room for a frame as long, header first.
  REQUIRE(f.bulk->jobs.size() == 2);
  CHECK(f.bulk->jobs[1].frame_min == kRecvOffWorkerMin);
  CHECK(f.bulk->jobs[1].then_header);
  complete(*f.worker, f.bulk->jobs[1], echo_frame(size, 2), 0, {});
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
  REQUIRE(f.bulk->jobs.size() == 3);
  CHECK(f.worker->reader(f.conn)->receiving_off_worker());
  // A small frame: the receiver hands back its header alone, and the
  // reactor takes the socket back.
  Bytes small = echo_frame(0, 3);
  const io::BulkReceiver::Job& job = f.bulk->jobs[2];
  REQUIRE(job.body.size() == large.size());
  std::memcpy(job.body.data(), small.data(), 4);
  io::BulkReceiver::Done d;
  d.conn_id = job.conn_id;
  d.received = 4;
  f.worker->on_off_worker_done(d);
  CHECK(f.worker->reader(f.conn)->reading());
  f.worker->on_recv(f.conn, ByteSpan(small).subspan(4));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}
