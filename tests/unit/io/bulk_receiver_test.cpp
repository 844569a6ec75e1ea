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
  std::thread client([&] {
    send_all(p.peer, sent.data(), sent.size());
    send_all(p.peer, header, sizeof header);
  });
  auto d = r.wait(1);
  client.join();
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
