// A worker's timed tasks (Worker::post_at, the deferred interim responses
// of slow WRITEs and FLUSHes): kept on the worker's own thread, so arming
// one wakes nobody; the reactor's wait ends at the earliest, and one that
// is no longer wanted, or whose connection went, does not run.
#include <atomic>
#include <memory>

#include "smb2/engine/clock.hpp"
#include "transport/worker_fixture.hpp"

using namespace ringsmb;
using namespace ringsmb::test;

namespace {

smb2::ConnTask counting(int& runs) {
  return [&runs](smb2::ConnState&, Bytes& out) {
    ++runs;
    Bytes e = echo_frame();
    out.insert(out.end(), e.begin(), e.end());
  };
}

}  // namespace

TEST_CASE("worker: a timed task wakes no thread and runs once due, its output sent", "[transport][worker][due]") {
  WorkerFixture f;
  int runs = 0;
  CHECK(f.worker->ms_until_due() == -1);
  f.worker->post_at(f.conn, smb2::monotonic_ms() + 60000, counting(runs));
  CHECK(f.reactor->wakes == 0);  // no other thread, no wake-up of this one
  int wait = f.worker->ms_until_due();
  CHECK(wait > 59000);
  CHECK(wait <= 60000);
  f.worker->on_due();  // a wait that ended for something else
  CHECK(runs == 0);
  f.worker->post_at(f.conn, smb2::monotonic_ms() - 1, counting(runs));  // due already
  CHECK(f.worker->ms_until_due() == 0);
  f.worker->on_due();
  CHECK(runs == 1);
  CHECK(reply_commands(f.read_peer()).size() == 1);
  CHECK(f.worker->ms_until_due() > 59000);  // the later one still waits
}

TEST_CASE("worker: a timed task no longer wanted ends no wait and does not run", "[transport][worker][due]") {
  WorkerFixture f;
  int runs = 0;
  auto wanted = std::make_shared<std::atomic<bool>>(true);
  f.worker->post_at(f.conn, smb2::monotonic_ms() + 5, counting(runs), wanted);
  CHECK(f.worker->ms_until_due() >= 0);
  *wanted = false;  // the request left the table: it completed, or CANCEL
  CHECK(f.worker->ms_until_due() == -1);
  f.worker->on_due();
  CHECK(runs == 0);
  // Unwanted behind a due one: dropped when its time comes, unrun.
  auto later = std::make_shared<std::atomic<bool>>(true);
  f.worker->post_at(f.conn, smb2::monotonic_ms() - 2, counting(runs));
  f.worker->post_at(f.conn, smb2::monotonic_ms() - 1, counting(runs), later);
  *later = false;
  f.worker->on_due();
  CHECK(runs == 1);
  CHECK(f.worker->ms_until_due() == -1);
}

TEST_CASE("worker: a timed task of a closed connection does not run", "[transport][worker][due]") {
  WorkerFixture f;
  int runs = 0;
  f.worker->post_at(f.conn, smb2::monotonic_ms() - 1, counting(runs));
  f.worker->on_recv_end(f.conn, 0);  // the client went: the connection is freed
  CHECK(f.ctx.connections.load() == 0);
  f.worker->on_due();
  CHECK(runs == 0);
  CHECK(f.worker->ms_until_due() == -1);
}
