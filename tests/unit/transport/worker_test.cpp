// transport::Worker driven by the test through a fake io::Reactor: the test
// plays the kernel's part (what arrives, when the socket has room, what a
// reactor send took) and reads the replies on the other end of a socketpair.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "transport/worker_fixture.hpp"
#include "wire/smb2_header.hpp"

using namespace ringsmb;
using namespace ringsmb::transport;
using namespace ringsmb::test;

TEST_CASE("worker: a frame split across receives is answered once, when whole", "[transport][worker]") {
  WorkerFixture f;
  Bytes frame = echo_frame();
  f.worker->on_recv(f.conn, ByteSpan(frame).first(3));  // not even the length header
  CHECK(f.read_peer().empty());
  f.worker->on_recv(f.conn, ByteSpan(frame).subspan(3, 30));
  CHECK(f.read_peer().empty());
  f.worker->on_recv(f.conn, ByteSpan(frame).subspan(33));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: two frames in one receive get their two replies", "[transport][worker]") {
  WorkerFixture f;
  Bytes two = echo_frame();
  Bytes second = echo_frame(0, 1);
  two.insert(two.end(), second.begin(), second.end());
  f.worker->on_recv(f.conn, two);
  CHECK(reply_commands(f.read_peer()).size() == 2);
}

TEST_CASE("worker: the rest of a large frame is received in place", "[transport][worker]") {
  WorkerFixture f(/*in_place=*/true);
  // Frames this large are accepted only after a login (docs/security.md):
  // the connection is marked logged in, and the next frame lifts its cap.
  f.worker->conn_state(f.conn)->logged_in = true;
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(reply_commands(f.read_peer()).size() == 1);
  const size_t size = 200 * 1024;
  Bytes frame = echo_frame(size, /*message_id=*/1);
  size_t first = 1000;
  f.worker->on_recv(f.conn, ByteSpan(frame).first(first));
  std::span<uint8_t> space = f.worker->recv_space(f.conn);
  // All that the frame still misses, in the frame's own buffer.
  REQUIRE(space.size() == size - first);
  std::memcpy(space.data(), frame.data() + first, 5000);  // a short receive first
  f.worker->on_recv_in_place(f.conn, 5000);
  CHECK(f.read_peer().empty());
  space = f.worker->recv_space(f.conn);
  REQUIRE(space.size() == size - first - 5000);
  std::memcpy(space.data(), frame.data() + first + 5000, space.size());
  f.worker->on_recv_in_place(f.conn, space.size());
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
  // After a large frame the next one's length header is read in place too
  // (a stream of large WRITEs), and nothing more until it is known.
  CHECK(f.worker->recv_space(f.conn).size() == 4);
}

TEST_CASE("worker: a full socket hands the reply to the reactor; short sends resume where they stopped",
          "[transport][worker]") {
  WorkerFixture f;
  size_t junk = f.fill_socket();
  REQUIRE(junk > 0);
  Bytes frame = echo_frame();
  f.worker->on_recv(f.conn, frame);  // the inline send meets EAGAIN
  REQUIRE(f.reactor->sends.size() == 1);
  msghdr* msg = f.reactor->sends[0].msg;
  REQUIRE(msg->msg_iovlen == 1);
  const size_t reply_size = msg->msg_iov[0].iov_len;
  REQUIRE(reply_size > 10);

  // Room appears; the reactor's send takes only 10 bytes.
  f.drain(junk);
  REQUIRE(send(f.server_fd, msg->msg_iov[0].iov_base, 10, MSG_DONTWAIT) == 10);
  f.worker->on_send(f.conn, 10);
  // The rest goes to the reactor again, starting after those 10 bytes.
  REQUIRE(f.reactor->sends.size() == 2);
  msg = f.reactor->sends[1].msg;
  REQUIRE(msg->msg_iov[0].iov_len == reply_size - 10);
  ssize_t n = send(f.server_fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, MSG_DONTWAIT);
  REQUIRE(n == ssize_t(reply_size - 10));
  f.worker->on_send(f.conn, int(n));
  CHECK(reply_commands(f.read_peer()) == std::vector{wire::Command::Echo});
}

TEST_CASE("worker: replies made while a send is out wait for it and keep their order", "[transport][worker]") {
  WorkerFixture f;
  size_t junk = f.fill_socket();
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->sends.size() == 1);
  // Another reply is produced meanwhile (as a posted task would).
  smb2::ConnTask task = [](smb2::ConnState&, Bytes& out) {
    Bytes e = echo_frame();
    out.insert(out.end(), e.begin(), e.end());
  };
  f.worker->post(f.conn, task);
  f.worker->on_wake();
  CHECK(f.reactor->sends.size() == 1);  // nothing new while the first send is out
  f.drain(junk);
  msghdr* msg = f.reactor->sends[0].msg;
  ssize_t n = send(f.server_fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, MSG_DONTWAIT);
  f.worker->on_send(f.conn, int(n));
  Bytes got = f.read_peer();
  // The reply first, then the posted bytes (an ECHO request frame here).
  REQUIRE(got.size() == size_t(n) + echo_frame().size());
  CHECK(Bytes(got.begin() + n, got.end()) == echo_frame());
}

TEST_CASE("worker: a connection closed while its send is out is freed when the send ends",
          "[transport][worker]") {
  WorkerFixture f;
  f.fill_socket();
  f.worker->on_recv(f.conn, echo_frame());
  REQUIRE(f.reactor->sends.size() == 1);
  CHECK(f.ctx.connections.load() == 1);
  f.worker->on_recv_end(f.conn, 0);  // the peer closed; the send is still out
  CHECK(f.ctx.connections.load() == 1);
  f.worker->on_send(f.conn, -EPIPE);  // the shutdown ends it
  CHECK(f.ctx.connections.load() == 0);
  // The worker closed its end: the peer reads the junk, then EOF.
  f.read_peer();
  uint8_t b;
  CHECK(recv(f.peer, &b, 1, 0) == 0);
  // Late completions for the freed connection are ignored.
  f.worker->on_send(f.conn, 5);
  f.worker->on_writable(f.conn, 0);
  f.worker->on_recv(f.conn, echo_frame());
}

namespace {

// A posted task that writes "HEAD", a file segment of the 8 bytes
// "FILEDATA" (sent with sendfile from FILE_FD), then "TAIL": a READ reply
// whose data stays in the file, as the transport sends it.
smb2::ConnTask reply_with_file(int file_fd) {
  return [file_fd](smb2::ConnState& state, Bytes& out) {
    const char head[] = "HEAD", tail[] = "TAIL";
    out.insert(out.end(), head, head + 4);
    smb2::FileSegment seg;
    seg.at = out.size();
    seg.fd = state::UniqueFd(dup(file_fd));
    seg.offset = 0;
    seg.length = 8;
    state.out_files.push_back(std::move(seg));
    out.insert(out.end(), tail, tail + 4);
  };
}

int file_with_data() {
  char name[] = "/tmp/ringsmb-worker-XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  unlink(name);
  REQUIRE(write(fd, "FILEDATA", 8) == 8);
  return fd;
}

}  // namespace

TEST_CASE("worker: file segments go out in their place, after a send the reactor finished",
          "[transport][worker]") {
  WorkerFixture f;
  int file = file_with_data();
  size_t junk = f.fill_socket();
  f.worker->post(f.conn, reply_with_file(file));
  f.worker->on_wake();
  REQUIRE(f.reactor->sends.size() == 1);  // "HEAD" waits for room in the reactor
  msghdr* msg = f.reactor->sends[0].msg;
  REQUIRE(msg->msg_iov[0].iov_len == 4);
  f.drain(junk);
  REQUIRE(send(f.server_fd, msg->msg_iov[0].iov_base, 4, MSG_DONTWAIT) == 4);
  f.worker->on_send(f.conn, 4);  // then sendfile and "TAIL", inline: there is room now
  Bytes got = f.read_peer();
  CHECK(std::string(got.begin(), got.end()) == "HEADFILEDATATAIL");
  close(file);
}

TEST_CASE("worker: a connection closed with file data queued is freed when the wait for room ends",
          "[transport][worker]") {
  WorkerFixture f;
  int file = file_with_data();
  f.fill_socket();
  f.worker->post(f.conn, reply_with_file(file));
  f.worker->on_wake();
  REQUIRE(f.reactor->sends.size() == 1);
  // The reactor's send of "HEAD" takes nothing... but says 4 bytes went:
  // the file segment is next, and the socket is still full.
  f.worker->on_send(f.conn, 4);
  REQUIRE(f.reactor->writable_waits.size() == 1);  // sendfile met EAGAIN
  f.worker->on_recv_end(f.conn, 0);
  CHECK(f.ctx.connections.load() == 1);  // the wait is still out
  f.worker->on_writable(f.conn, -ECONNRESET);
  CHECK(f.ctx.connections.load() == 0);
  uint8_t b;
  f.read_peer();
  CHECK(recv(f.peer, &b, 1, 0) == 0);  // the worker closed its end
  close(file);
}

TEST_CASE("worker: its counters see the connection, the requests and the bytes", "[transport][worker][metrics]") {
  WorkerFixture f;
  Bytes two = echo_frame();
  Bytes second = echo_frame(0, 1);
  two.insert(two.end(), second.begin(), second.end());
  f.worker->on_recv(f.conn, two);
  Bytes replies = f.read_peer();
  REQUIRE(reply_commands(replies).size() == 2);
  const smb2::WorkerMetrics& m = f.worker->metrics();
  CHECK(m.connections_accepted == 1);
  CHECK(m.bytes_received == two.size());
  CHECK(m.bytes_sent == replies.size());
  const smb2::CommandMetrics& echo = m.commands[uint16_t(wire::Command::Echo)];
  uint64_t answered = 0, timed = 0;
  for (uint64_t n : echo.responses) answered += n;
  for (uint64_t n : echo.latency) timed += n;
  CHECK(answered == 2);
  CHECK(timed == 2);
  CHECK(m.commands[uint16_t(wire::Command::Create)].responses == std::array<uint64_t, smb2::kStatusClasses>{});
}
