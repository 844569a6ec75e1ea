// Reactor::wake() from other threads, on the real backends: every task a
// thread queues before it calls wake() is run by on_wake, even when many
// wake() calls end in one on_wake (the io_uring backend writes its eventfd
// only when no wake-up is pending).
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "io/quiet_handler.hpp"
#include "io/reactor.hpp"

using namespace ringsmb;

namespace {

// Counts the tasks other threads queued, the way Worker::post does.
struct CountingHandler final : test::QuietHandler {
  void on_wake() override {
    std::lock_guard lock(mu);
    run += queued;
    queued = 0;
    ++wakes;
  }
  void post(io::Reactor& r) {
    {
      std::lock_guard lock(mu);
      ++queued;
    }
    r.wake();
  }
  uint64_t ran() {
    std::lock_guard lock(mu);
    return run;
  }
  std::mutex mu;
  uint64_t queued = 0;  // guarded by mu
  uint64_t run = 0;     // guarded by mu
  uint64_t wakes = 0;   // guarded by mu
};

void check_every_post_runs(bool uring) {
  CountingHandler h;
  io::ReactorOptions opts;
  opts.tick_ms = 50;
  std::unique_ptr<io::Reactor> r = test::make_test_reactor(h, opts, uring);
  if (!r) return;
  std::atomic<bool> stop{false};
  std::thread loop([&] { r->run(stop); });
  constexpr int kThreads = 4, kPosts = 20000;
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t)
    posters.emplace_back([&] {
      for (int i = 0; i < kPosts; ++i) {
        h.post(*r);
        if (i % 1000 == 0) std::this_thread::yield();
      }
    });
  for (auto& p : posters) p.join();
  // Each post must end in an on_wake that runs it (on_tick runs no tasks:
  // a lost wake-up would leave its task queued for good).
  for (int i = 0; i < 500 && h.ran() < uint64_t(kThreads) * kPosts; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(h.ran() == uint64_t(kThreads) * kPosts);
  // A post after the reactor has gone quiet wakes it again.
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    uint64_t before = h.ran();
    h.post(*r);
    for (int i = 0; i < 500 && h.ran() == before; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(h.ran() == before + 1);
  }
  stop = true;
  h.post(*r);  // ends the wait at once rather than at the next tick
  loop.join();
}

}  // namespace

TEST_CASE("io_uring reactor: every task queued before wake() runs", "[reactor]") { check_every_post_runs(true); }

TEST_CASE("epoll reactor: every task queued before wake() runs", "[reactor]") { check_every_post_runs(false); }
