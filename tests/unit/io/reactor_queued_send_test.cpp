// io_uring's queue_send on a real ring: a send queued on the reactor's
// thread goes out with its next wait and is reported with the bytes the
// socket took: all, some (exactly those that arrive), or -EAGAIN.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "io/quiet_handler.hpp"
#include "io/reactor.hpp"

using namespace ringsmb;

namespace {

// Runs tasks on the reactor's thread (queue_send must be called there) and
// records the sends it reports.
struct SendingHandler final : test::QuietHandler {
  bool wants_send_report(uint64_t) override { return report_wanted; }
  void on_send(uint64_t conn_id, int result) override {
    std::lock_guard lock(mu);
    sent.emplace_back(conn_id, result);
  }
  void on_wake() override {
    std::vector<std::function<void()>> now;
    {
      std::lock_guard lock(mu);
      now.swap(tasks);
    }
    for (auto& t : now) t();
  }
  void run_there(io::Reactor& r, std::function<void()> task) {
    {
      std::lock_guard lock(mu);
      tasks.push_back(std::move(task));
    }
    r.wake();
  }
  // The sends reported, once there are N of them (empty after MS).
  std::vector<std::pair<uint64_t, int>> wait_sent(size_t n, int ms = 5000) {
    for (int i = 0; i < ms / 10; ++i) {
      {
        std::lock_guard lock(mu);
        if (sent.size() >= n) return std::exchange(sent, {});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {};
  }
  std::atomic<bool> report_wanted{true};
  std::mutex mu;
  std::vector<std::function<void()>> tasks;        // guarded by mu
  std::vector<std::pair<uint64_t, int>> sent;      // guarded by mu
};

size_t drain(int fd) {
  uint8_t buf[65536];
  size_t total = 0;
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) total += size_t(n);
  return total;
}

struct Ring {
  SendingHandler h;
  std::unique_ptr<io::Reactor> r;
  std::atomic<bool> stop{false};
  std::thread loop;
  int sv[2] = {-1, -1};
  bool queues = false;
  explicit Ring(int tick_ms = 50) {
    io::ReactorOptions opts;
    opts.tick_ms = tick_ms;
    std::string why;
    r = io::make_uring_reactor(h, opts, why);
    if (!r) return;
    loop = std::thread([this] { r->run(stop); });
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  }
  ~Ring() {
    if (loop.joinable()) {
      stop = true;
      r->wake();
      loop.join();
    }
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
  }
  // queue_send of SIZE bytes at DATA for connection ID, on the reactor's thread.
  bool queue(uint64_t id, const uint8_t* data, size_t size) {
    std::atomic<int> done{-1};
    h.run_there(*r, [&] { done = r->queue_send(id, sv[0], data, size) ? 1 : 0; });
    for (int i = 0; i < 500 && done < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done == 1;
  }
};

const std::vector<uint8_t> kBytes(1 << 20, 0x5A);

}  // namespace

TEST_CASE("io_uring reactor: a queued send goes out and reports what the socket took", "[reactor]") {
  Ring ring;
  if (!ring.r) {
    WARN("no io_uring here");
    return;
  }
  if (!ring.queue(7, kBytes.data(), 300)) {
    WARN("this kernel's io_uring cannot queue sends: replies go out inline");
    return;
  }
  CHECK(ring.h.wait_sent(1) == std::vector<std::pair<uint64_t, int>>{{7, 300}});
  CHECK(drain(ring.sv[1]) == 300);

  // A full socket: nothing taken, -EAGAIN, nothing arrives.
  size_t filled = 0;
  ssize_t n;
  while ((n = send(ring.sv[0], kBytes.data(), 65536, MSG_DONTWAIT)) > 0) filled += size_t(n);
  REQUIRE(ring.queue(8, kBytes.data(), 4096));
  CHECK(ring.h.wait_sent(1) == std::vector<std::pair<uint64_t, int>>{{8, -EAGAIN}});

  // Some room: the count reported is what arrives, no more, no less.
  uint8_t some[16384];
  ssize_t freed = recv(ring.sv[1], some, sizeof some, MSG_DONTWAIT);
  REQUIRE(freed > 0);
  REQUIRE(ring.queue(9, kBytes.data(), kBytes.size()));
  auto sent = ring.h.wait_sent(1);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].first == 9);
  const int took = sent[0].second;
  CHECK(took < int(kBytes.size()));
  CHECK(size_t(freed) + drain(ring.sv[1]) == filled + size_t(std::max(took, 0)));
}

TEST_CASE("io_uring reactor: queued sends of several connections in one turn all report", "[reactor]") {
  Ring ring;
  if (!ring.r) return;
  int other[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, other) == 0);
  std::atomic<int> queued{-1};
  ring.h.run_there(*ring.r, [&] {
    queued = ring.r->queue_send(1, ring.sv[0], kBytes.data(), 100) &&
             ring.r->queue_send(2, other[0], kBytes.data(), 200);
  });
  auto sent = ring.h.wait_sent(2);
  if (queued == 0) {
    WARN("this kernel's io_uring cannot queue sends");
  } else {
    std::sort(sent.begin(), sent.end());
    CHECK(sent == std::vector<std::pair<uint64_t, int>>{{1, 100}, {2, 200}});
    CHECK(drain(ring.sv[1]) == 100);
    CHECK(drain(other[1]) == 200);
  }
  close(other[0]);
  close(other[1]);
}

TEST_CASE("io_uring reactor: a queued send is reported before the wait when the handler wants it", "[reactor]") {
  Ring ring(/*tick_ms=*/60000);  // no tick comes to report it
  if (!ring.r) return;
  if (!ring.queue(3, kBytes.data(), 100)) return;
  CHECK(ring.h.wait_sent(1) == std::vector<std::pair<uint64_t, int>>{{3, 100}});
  // Not wanted: the report waits for the next completion (here a wake-up),
  // the bytes do not.
  ring.h.report_wanted = false;
  REQUIRE(ring.queue(4, kBytes.data(), 200));
  CHECK(ring.h.wait_sent(1, 300).empty());
  CHECK(drain(ring.sv[1]) == 300);
  ring.h.run_there(*ring.r, [] {});
  CHECK(ring.h.wait_sent(1) == std::vector<std::pair<uint64_t, int>>{{4, 200}});
}

TEST_CASE("io_uring reactor: a queued send is reported before the completions that follow it", "[reactor]") {
  Ring ring(/*tick_ms=*/60000);
  if (!ring.r) return;
  ring.h.report_wanted = false;  // the report waits for the next completion
  if (!ring.queue(5, kBytes.data(), 100)) return;
  CHECK(ring.h.wait_sent(1, 200).empty());
  CHECK(drain(ring.sv[1]) == 100);
  // That completion (a wake-up) is handled after the report: what it
  // does finds the reply gone, as after an inline send.
  std::atomic<int> reports_seen{-1};
  ring.h.run_there(*ring.r, [&] {
    std::lock_guard lock(ring.h.mu);
    reports_seen = int(ring.h.sent.size());
  });
  for (int i = 0; i < 500 && reports_seen < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(reports_seen == 1);
  CHECK(ring.h.wait_sent(1) == std::vector<std::pair<uint64_t, int>>{{5, 100}});
}
