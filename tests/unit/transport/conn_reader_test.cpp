// transport::ConnReader: each named transition, and what it asks of the
// reactor (a fake that records pause_recv and resume_recv).
#include <catch2/catch.hpp>

#include <vector>

#include "transport/conn_reader.hpp"
#include "transport/fake_reactor.hpp"

using namespace ringsmb;
using namespace ringsmb::transport;
using State = ConnReader::State;
using ringsmb::test::FakeReactor;

namespace {
constexpr uint64_t kConn = 7;
const std::vector<uint64_t> kOnce{kConn};
}  // namespace

TEST_CASE("conn reader: a pause stops the reactor once; the resume starts it after the backlog",
          "[transport][conn_reader]") {
  FakeReactor reactor;
  ConnReader r(reactor, kConn);
  CHECK(r.reading());
  r.pause();
  r.pause();  // paused already: nothing more for the reactor
  CHECK(r.state() == State::Paused);
  CHECK(r.paused());
  CHECK(reactor.paused == kOnce);
  r.begin_resume();
  CHECK(r.state() == State::Resuming);
  CHECK(reactor.resumed.empty());  // the backlog is framed first
  r.end_resume();
  CHECK(r.reading());
  CHECK(reactor.resumed == kOnce);
}

TEST_CASE("conn reader: a pause while the backlog is framed keeps the reactor paused",
          "[transport][conn_reader]") {
  FakeReactor reactor;
  ConnReader r(reactor, kConn);
  r.pause();
  r.begin_resume();
  r.pause();  // a frame of the backlog paused again
  CHECK(r.state() == State::Paused);
  r.end_resume();  // nothing to do: still paused
  CHECK(r.state() == State::Paused);
  CHECK(reactor.paused == kOnce);
  CHECK(reactor.resumed.empty());
}

TEST_CASE("conn reader: off-worker receive stops the reactor and gives it back", "[transport][conn_reader]") {
  FakeReactor reactor;
  ConnReader r(reactor, kConn);
  r.stop_for_off_worker();
  CHECK(r.stopping());
  CHECK(reactor.paused == kOnce);
  r.start_off_worker(ConnReader::Job::Body);
  CHECK(r.receiving_off_worker());
  CHECK(r.job() == ConnReader::Job::Body);
  r.off_worker_done();
  CHECK(r.state() == State::Stopping);
  r.start_off_worker(ConnReader::Job::Header);  // the next frame's header, still off the worker
  CHECK(r.job() == ConnReader::Job::Header);
  r.off_worker_done();
  r.off_worker_run = 5;
  r.end_off_worker();
  CHECK(r.reading());
  CHECK(r.off_worker_run == 0);
  CHECK(reactor.resumed == kOnce);
  CHECK(reactor.paused == kOnce);
}

TEST_CASE("conn reader: a pause during off-worker receive outlives it", "[transport][conn_reader]") {
  FakeReactor reactor;
  ConnReader r(reactor, kConn);
  r.stop_for_off_worker();
  r.start_off_worker(ConnReader::Job::Body);
  r.pause();  // a held request ran into the send-queue bound meanwhile
  CHECK(r.state() == State::OffWorkerPaused);
  CHECK(r.receiving_off_worker());
  CHECK(r.paused());
  r.off_worker_done();
  CHECK(r.state() == State::StoppingPaused);
  r.end_off_worker();  // the socket comes back, but the reactor stays paused
  CHECK(r.state() == State::Paused);
  CHECK(reactor.resumed.empty());
  CHECK(reactor.paused == kOnce);
  r.begin_resume();
  r.end_resume();
  CHECK(reactor.resumed == kOnce);
}

TEST_CASE("conn reader: a dropped connection's reactor receives again to see the end",
          "[transport][conn_reader]") {
  SECTION("paused") {
    FakeReactor reactor;
    ConnReader r(reactor, kConn);
    r.pause();
    r.unpause_to_close();
    CHECK(r.reading());
    CHECK(reactor.resumed == kOnce);
  }
  SECTION("while the backlog is framed") {
    FakeReactor reactor;
    ConnReader r(reactor, kConn);
    r.pause();
    r.begin_resume();
    r.unpause_to_close();
    CHECK(r.reading());
    CHECK(reactor.resumed == kOnce);
  }
  SECTION("off the worker: the receiver's end resumes it") {
    FakeReactor reactor;
    ConnReader r(reactor, kConn);
    r.stop_for_off_worker();
    r.start_off_worker(ConnReader::Job::Body);
    r.pause();
    r.unpause_to_close();
    CHECK(r.state() == State::OffWorker);
    CHECK(reactor.resumed.empty());
    r.off_worker_done();
    r.end_off_worker();
    CHECK(reactor.resumed == kOnce);
  }
}

TEST_CASE("conn reader: after a move the new reactor is the one resumed", "[transport][conn_reader]") {
  FakeReactor from, to;
  ConnReader r(from, kConn);
  r.stop_for_off_worker();
  r.moved_to(to);
  r.end_off_worker();
  CHECK(from.resumed.empty());
  CHECK(to.resumed == kOnce);
}

TEST_CASE("conn reader: held requests come back in order, each framed", "[transport][conn_reader]") {
  FakeReactor reactor;
  ConnReader r(reactor, kConn);
  const uint8_t a[] = {1, 2, 3};
  const uint8_t b[] = {9};
  r.hold(a);
  r.hold(b);
  r.waits_for_writes = true;
  Bytes held = r.take_held();
  CHECK(held == Bytes{0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 1, 9});
  CHECK(r.held_requests.empty());
  CHECK_FALSE(r.waits_for_writes);
}
