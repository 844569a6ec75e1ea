// BulkReceiver: fills a frame's rest from a socket on its own thread, in
// order, takes the next header when it is there, and reports a stream
// that ends early.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include "io/bulk_receiver.hpp"

using ringsmb::io::BulkReceiver;
using ringsmb::io::ThreadBulkReceiver;

namespace {

// A socket pair: `ours` is the receiver's side (non-blocking, as accepted
// sockets are), `peer` the client's.
struct Pair {
  int ours = -1, peer = -1;
  Pair() {
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    ours = fds[0];
    peer = fds[1];
  }
  ~Pair() {
    close(ours);
    if (peer >= 0) close(peer);
  }
};

// Blocking write of all of DATA from another thread's point of view.
void send_all(int fd, const uint8_t* data, size_t n) {
  while (n) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EAGAIN) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    REQUIRE(w > 0);
    data += w;
    n -= size_t(w);
  }
}

struct Results {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<BulkReceiver::Done> done;

  BulkReceiver::OnDone callback() {
    return [this](const BulkReceiver::Done& d) {
      std::lock_guard lock(mu);
      done.push_back(d);
      cv.notify_all();
    };
  }
  std::optional<BulkReceiver::Done> wait(size_t count) {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return done.size() >= count; })) return std::nullopt;
    return done[count - 1];
  }
};

// A client thread sends BODY, then N bytes of NEXT (the next frame's
// start), while the receiver fills; the first Done.
std::optional<BulkReceiver::Done> send_and_wait(Results& r, int peer, const std::vector<uint8_t>& body,
                                                const uint8_t* next, size_t n) {
  std::thread client([&] {
    send_all(peer, body.data(), body.size());
    send_all(peer, next, n);
  });
  auto d = r.wait(1);
  client.join();
  return d;
}

}  // namespace

TEST_CASE("the receiver fills a large body in order and takes the next header", "[io]") {
  Pair p;
  Results r;
  ThreadBulkReceiver bulk(r.callback());
  REQUIRE(bulk.start());
  std::vector<uint8_t> sent(3 << 20);  // more than one slice
  std::iota(sent.begin(), sent.end(), uint8_t(0));
  for (size_t i = 0; i < sent.size(); i += 4096) sent[i] = uint8_t(i >> 12);
  const uint8_t header[4] = {0, 0x01, 0x02, 0x03};
  std::vector<uint8_t> body(sent.size());
  bulk.submit({7, p.ours, body});
  auto d = send_and_wait(r, p.peer, sent, header, sizeof header);
  REQUIRE(d);
  CHECK(d->conn_id == 7);
  CHECK_FALSE(d->failed);
  CHECK(d->received == sent.size());
  CHECK(body == sent);
  // The header is usually in with the body's last bytes; never more than it.
  REQUIRE(d->header_len <= 4);
  CHECK(std::memcmp(d->header, header, d->header_len) == 0);
}

TEST_CASE("a header-only job waits for the header and takes nothing past it", "[io]") {
  Pair p;
  Results r;
  ThreadBulkReceiver bulk(r.callback());
  REQUIRE(bulk.start());
  uint8_t header[4] = {};
  bulk.submit({3, p.ours, header, false});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard lock(r.mu);
    CHECK(r.done.empty());  // nothing sent yet: it waits
  }
  const uint8_t sent[6] = {0, 0, 0, 2, 0xAA, 0xBB};
  send_all(p.peer, sent, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  send_all(p.peer, sent + 2, 4);
  auto d = r.wait(1);
  REQUIRE(d);
  CHECK(d->received == 4);
  CHECK(d->header_len == 0);
  CHECK(std::memcmp(header, sent, 4) == 0);
  uint8_t rest[4] = {};
  CHECK(recv(p.ours, rest, sizeof rest, MSG_DONTWAIT) == 2);  // the frame's body is still in the socket
  CHECK(rest[0] == 0xAA);
}

TEST_CASE("a stream that ends before the body is full is reported as failed, with what came", "[io]") {
  Pair p;
  Results r;
  ThreadBulkReceiver bulk(r.callback());
  REQUIRE(bulk.start());
  std::vector<uint8_t> body(100000);
  bulk.submit({9, p.ours, body});
  std::vector<uint8_t> sent(1000, 0x5A);
  send_all(p.peer, sent.data(), sent.size());
  close(p.peer);
  p.peer = -1;
  auto d = r.wait(1);
  REQUIRE(d);
  CHECK(d->failed);
  CHECK(d->received == 1000);
  CHECK(body[999] == 0x5A);
}

TEST_CASE("a socket shut down by its owner ends the job; jobs of several sockets run together", "[io]") {
  Pair stalled, streaming;
  Results r;
  ThreadBulkReceiver bulk(r.callback());
  REQUIRE(bulk.start());
  std::vector<uint8_t> a(1 << 20), b(1 << 20);
  bulk.submit({1, stalled.ours, a});  // its client announced a frame and sends nothing
  bulk.submit({2, streaming.ours, b});
  std::vector<uint8_t> sent(b.size(), 0x11);
  send_all(streaming.peer, sent.data(), sent.size());
  auto first = r.wait(1);
  REQUIRE(first);
  CHECK(first->conn_id == 2);  // not held up by the stalled one
  CHECK(first->received == b.size());
  shutdown(stalled.ours, SHUT_RDWR);  // the worker drops the connection
  auto second = r.wait(2);
  REQUIRE(second);
  CHECK(second->conn_id == 1);
  CHECK(second->failed);
}

TEST_CASE("stopping the receiver with a job still running ends its thread", "[io]") {
  Pair p;
  Results r;
  std::vector<uint8_t> body(1 << 20);
  {
    ThreadBulkReceiver bulk(r.callback());
    REQUIRE(bulk.start());
    bulk.submit({5, p.ours, body});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }  // joins; the job ends without a Done
  std::lock_guard lock(r.mu);
  CHECK(r.done.empty());
}

// A header job with room for a whole frame (frame_min): a large frame
// that fits comes back whole, then the next header; a small one, or one
// longer than the room, ends the job after its header and stays in the
// socket.
TEST_CASE("a frame job receives a large frame whole and stops after the header of any other", "[io]") {
  Pair p;
  Results r;
  ThreadBulkReceiver bulk(r.callback());
  REQUIRE(bulk.start());
  const size_t len = 300000, room = 4 + 400000;
  std::vector<uint8_t> sent = {0, uint8_t(len >> 16), uint8_t(len >> 8), uint8_t(len)};
  for (size_t i = 0; i < len; ++i) sent.push_back(uint8_t(i * 7 + (i >> 10)));
  const uint8_t small[6] = {0, 0, 0, 2, 0xAA, 0xBB};
  std::vector<uint8_t> buf(room);
  bulk.submit({4, p.ours, buf, true, 256 * 1024});
  auto d = send_and_wait(r, p.peer, sent, small, sizeof small);
  REQUIRE(d);
  CHECK_FALSE(d->failed);
  REQUIRE(d->received == sent.size());
  CHECK(std::equal(sent.begin(), sent.end(), buf.begin()));
  // The small frame's header, when it was in before the Done; never more.
  REQUIRE(d->header_len <= 4);
  CHECK(std::memcmp(d->header, small, d->header_len) == 0);

  // The rest of the small frame is next in the socket (all of it sent:
  // the client has joined); then a small frame and a frame longer than
  // the room each end a frame job at their header.
  uint8_t rest[6] = {};
  size_t left = sizeof small - d->header_len;
  REQUIRE(recv(p.ours, rest, left, MSG_DONTWAIT) == ssize_t(left));
  CHECK(std::memcmp(rest, small + d->header_len, left) == 0);
  uint8_t body[2] = {};
  const size_t big = 500000;
  const uint8_t headers[8] = {0, 0, 0, 2, 0, uint8_t(big >> 16), uint8_t(big >> 8), uint8_t(big)};
  for (int i = 0; i < 2; ++i) {
    bulk.submit({4, p.ours, buf, true, 256 * 1024});
    send_all(p.peer, headers + 4 * i, 4);
    if (i == 0) send_all(p.peer, small + 4, 2);
    auto h = r.wait(2 + size_t(i));
    REQUIRE(h);
    CHECK(h->received == 4);
    CHECK(h->header_len == 0);
    CHECK(std::memcmp(buf.data(), headers + 4 * i, 4) == 0);
    if (i == 0) REQUIRE(recv(p.ours, body, sizeof body, MSG_DONTWAIT) == 2);  // left in the socket
  }
}
