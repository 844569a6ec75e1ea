// The tick on the real backends: it comes every tick_ms while the handler
// wants it, stops when the handler says it has nothing that may expire
// (an idle server sets no timer), and comes back after the next event
// once the handler wants it again.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "io/quiet_handler.hpp"
#include "io/reactor.hpp"

using namespace ringsmb;

namespace {

struct TickHandler final : test::QuietHandler {
  void on_tick() override { ticks.fetch_add(1); }
  bool wants_tick() override { return want.load(); }
  std::atomic<int> ticks{0};
  std::atomic<bool> want{true};
};

int ticks_during(TickHandler& h, int ms) {
  int before = h.ticks.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return h.ticks.load() - before;
}

void check_tick_only_when_wanted(bool uring) {
  TickHandler h;
  io::ReactorOptions opts;
  opts.tick_ms = 20;
  std::unique_ptr<io::Reactor> r = test::make_test_reactor(h, opts, uring);
  if (!r) return;
  std::atomic<bool> stop{false};
  std::thread loop([&] { r->run(stop); });
  CHECK(ticks_during(h, 300) >= 3);  // 15 at 20 ms; a loaded machine delays some
  h.want = false;
  ticks_during(h, 60);  // the tick armed before the change may still come
  CHECK(ticks_during(h, 300) == 0);
  h.want = true;
  r->wake();  // an event: the reactor asks again
  CHECK(ticks_during(h, 300) >= 3);
  stop = true;
  r->wake();  // with no tick wanted, the stop needs an event
  loop.join();
}

}  // namespace

TEST_CASE("io_uring reactor: ticks only while the handler wants them", "[reactor]") {
  check_tick_only_when_wanted(true);
}

TEST_CASE("epoll reactor: ticks only while the handler wants them", "[reactor]") {
  check_tick_only_when_wanted(false);
}
