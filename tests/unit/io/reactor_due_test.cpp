// The handler's deadlines (ReactorHandler::ms_until_due), on the real
// backends: the wait ends at the deadline with no wake() from another
// thread and long before the tick, and without a deadline the reactor
// sleeps (no on_due between ticks). io_uring and epoll behave the same.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "io/quiet_handler.hpp"
#include "io/reactor.hpp"

using namespace ringsmb;
using Clock = std::chrono::steady_clock;

namespace {

// One deadline at a time, all on the reactor's thread but `arm`, which
// the test calls before the run starts or while it is stopped by a wake.
struct DeadlineHandler final : test::QuietHandler {
  int ms_until_due() override {
    if (!armed) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count();
    return left < 0 ? 0 : int(left);
  }
  void on_due() override {
    ++due_calls;
    if (!armed || Clock::now() < due) return;
    armed = false;
    fired_at = Clock::now();
    ++fired;
  }
  void on_tick() override { ++ticks; }
  bool armed = false;
  Clock::time_point due{}, fired_at{};
  std::atomic<int> fired{0};
  std::atomic<int> due_calls{0};
  std::atomic<int> ticks{0};
};

void check_deadline_ends_the_wait(bool uring) {
  DeadlineHandler h;
  io::ReactorOptions opts;
  opts.tick_ms = 20000;  // far beyond the test: only the deadline can end the wait
  std::unique_ptr<io::Reactor> r = test::make_test_reactor(h, opts, uring);
  if (!r) return;
  h.due = Clock::now() + std::chrono::milliseconds(50);
  h.armed = true;
  Clock::time_point start = Clock::now();
  std::atomic<bool> stop{false};
  std::thread loop([&] { r->run(stop); });
  for (int i = 0; i < 1000 && h.fired == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(h.fired == 1);
  CHECK(h.fired_at >= h.due);
  CHECK(h.fired_at - start < std::chrono::seconds(5));  // not at the tick (20 s), even on a loaded machine
  // No deadline left: the reactor sleeps. A few calls at most (the ones
  // of the wait that fired it); a loop would make thousands.
  int calls = h.due_calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(h.due_calls - calls <= 2);
  CHECK(h.ticks == 0);
  stop = true;
  r->wake();
  loop.join();
}

}  // namespace

TEST_CASE("io_uring reactor: the wait ends at the handler's deadline", "[reactor][due]") {
  check_deadline_ends_the_wait(true);
}

TEST_CASE("epoll reactor: the wait ends at the handler's deadline", "[reactor][due]") {
  check_deadline_ends_the_wait(false);
}
