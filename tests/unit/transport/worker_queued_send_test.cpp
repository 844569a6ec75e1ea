// transport::Worker on a reactor that sends replies with its next wait
// (io::Reactor::queue_send, as io_uring does): the reply is handed over,
// not sent inline; the test plays the kernel's part and reports what the
// socket took, all, some or nothing.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "transport/worker_fixture.hpp"
#include "wire/smb2_header.hpp"

using namespace ringsmb;
using namespace ringsmb::test;

namespace {

// Sends N bytes of queued send I on the worker's socket, as the kernel
// would at the reactor's submit.
void take(WorkerFixture& f, size_t i, size_t n) {
  REQUIRE(f.reactor->queued_sends.size() > i);
  REQUIRE(send(f.server_fd, f.reactor->queued_sends[i].data, n, MSG_DONTWAIT) == ssize_t(n));
}

}  // namespace

TEST_CASE("worker: a reply goes out with the reactor's next wait, not inline", "[transport][worker]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->queued_sends.size() == 1);
  CHECK(f.reactor->queued_sends[0].conn_id == f.conn);
  CHECK(f.read_peer().empty());  // nothing sent inline
  const size_t size = f.reactor->queued_sends[0].size;
  take(f, 0, size);
  f.worker->on_send(f.conn, int(size));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
  CHECK(f.reactor->sends.empty());
  // The next reply is queued the same way.
  f.worker->on_recv(f.conn, echo_frame(0, 1));
  CHECK(f.reactor->queued_sends.size() == 2);
}

TEST_CASE("worker: what a queued send could not send goes to the reactor's send, in order", "[transport][worker]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->queued_sends.size() == 1);
  const size_t size = f.reactor->queued_sends[0].size;
  REQUIRE(size > 10);
  take(f, 0, 10);
  f.worker->on_send(f.conn, 10);  // the socket took 10 bytes
  REQUIRE(f.reactor->sends.size() == 1);
  msghdr* msg = f.reactor->sends[0].msg;
  REQUIRE(msg->msg_iov[0].iov_len == size - 10);
  REQUIRE(send(f.server_fd, msg->msg_iov[0].iov_base, size - 10, MSG_DONTWAIT) == ssize_t(size - 10));
  f.worker->on_send(f.conn, int(size - 10));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: a queued send into a full socket waits for room with the whole reply", "[transport][worker]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  size_t junk = f.fill_socket();
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->queued_sends.size() == 1);
  const size_t size = f.reactor->queued_sends[0].size;
  f.worker->on_send(f.conn, -EAGAIN);  // not an error: the socket was full
  CHECK(f.ctx.connections.load() == 1);
  REQUIRE(f.reactor->sends.size() == 1);
  msghdr* msg = f.reactor->sends[0].msg;
  REQUIRE(msg->msg_iov[0].iov_len == size);
  f.drain(junk);
  REQUIRE(send(f.server_fd, msg->msg_iov[0].iov_base, size, MSG_DONTWAIT) == ssize_t(size));
  f.worker->on_send(f.conn, int(size));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: replies made while a queued send is out follow it", "[transport][worker]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->queued_sends.size() == 1);
  // Two more replies meanwhile: one in the same receive's turn, one posted.
  f.worker->on_recv(f.conn, echo_frame(0, 1));
  f.worker->post(f.conn, [](smb2::ConnState&, Bytes& out) {
    Bytes e = echo_frame();
    out.insert(out.end(), e.begin(), e.end());
  });
  f.worker->on_wake();
  CHECK(f.reactor->queued_sends.size() == 1);  // nothing new while the first is out
  const size_t first = f.reactor->queued_sends[0].size;
  take(f, 0, first);
  f.worker->on_send(f.conn, int(first));
  // Both wait in one buffer and go out as one queued send.
  REQUIRE(f.reactor->queued_sends.size() == 2);
  const size_t second = f.reactor->queued_sends[1].size;
  take(f, 1, second);
  f.worker->on_send(f.conn, int(second));
  Bytes got = f.read_peer();
  REQUIRE(got.size() == first + second);
  CHECK(Bytes(got.end() - ptrdiff_t(echo_frame().size()), got.end()) == echo_frame());
}

TEST_CASE("worker: a connection closed while its queued send is out is freed when it ends", "[transport][worker]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->queued_sends.size() == 1);
  f.worker->on_recv_end(f.conn, 0);
  CHECK(f.ctx.connections.load() == 1);  // its buffer is the kernel's until the send ends
  f.worker->on_send(f.conn, -EPIPE);
  CHECK(f.ctx.connections.load() == 0);
}

TEST_CASE("worker: replies wait while breaks the connection started elsewhere are on their way",
          "[transport][worker][break]") {
  WorkerFixture f;
  f.worker->conn_state(f.conn)->breaks_unsent = 1;
  f.worker->on_recv(f.conn, echo_frame());
  CHECK(f.read_peer().empty());
  CHECK(f.reactor->queued_sends.empty());
  // The break's worker says it went out (smb2/leases/lease_break.cpp).
  f.worker->post(f.conn, [](smb2::ConnState& c, Bytes&) { --c.breaks_unsent; });
  f.worker->on_wake();
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: a break another connection waits for is sent inline, not with the next wait",
          "[transport][worker][break]") {
  WorkerFixture f;
  f.reactor->queues_sends = true;
  Bytes frame = echo_frame();  // stands for the break notification
  f.worker->post(f.conn, [frame](smb2::ConnState& c, Bytes& out) {
    out.insert(out.end(), frame.begin(), frame.end());
    c.send_at_once = true;
  });
  f.worker->on_wake();
  CHECK(f.reactor->queued_sends.empty());
  CHECK(f.read_peer() == frame);  // in the socket when the task is done
  CHECK_FALSE(f.worker->conn_state(f.conn)->send_at_once);
  // Later replies go with the reactor's wait again.
  f.worker->on_recv(f.conn, echo_frame());
  CHECK(f.reactor->queued_sends.size() == 1);
}

TEST_CASE("worker: directory changes read are handed out once the reactor has looked again",
          "[transport][worker][notify]") {
  WorkerFixture f;
  f.worker->on_readable(1);  // the changes' token; nothing watched: nothing read
  CHECK(f.reactor->looks == 1);  // the delivery waits for what arrived before the read
  f.worker->on_looked_again();   // nothing kept: nothing to hand out
}
