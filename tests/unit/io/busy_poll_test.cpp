// BusyPoll: the worker polls before sleeping only while the recent gaps
// between bursts of work were within the window. Time is a clock the test
// moves (a look for work takes 100 us of it, a "sleep" as long as asked),
// so the gaps are exactly what each step says.
#include <catch2/catch.hpp>
#include <chrono>

#include "io/reactor.hpp"

using ringsmb::io::BasicBusyPoll;

namespace {

struct TestClock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<TestClock, duration>;
  static constexpr bool is_steady = true;
  static time_point now() { return time_point(elapsed); }
  static void advance(duration d) { elapsed += d; }
  static inline duration elapsed{};
};

using BusyPoll = BasicBusyPoll<TestClock>;
constexpr auto kLookTakes = std::chrono::microseconds(100);

// One gap: poll() (whose looks find work at once, if it polls), then the
// work comes after `gap` (the "sleep").
bool gap_of(BusyPoll& p, std::chrono::microseconds gap, int& looks) {
  bool found = p.poll([&] {
    ++looks;
    TestClock::advance(kLookTakes);
    return true;
  });
  if (!found) TestClock::advance(gap);
  p.work_found();
  return found;
}

}  // namespace

TEST_CASE("busy polling starts when work keeps coming within the window, and stops when it does not", "[io]") {
  BusyPoll p(2000);  // 2 ms
  int looks = 0;
  CHECK_FALSE(p.polling());  // a new worker sleeps at once
  for (int i = 0; i < 4; ++i) CHECK_FALSE(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 0);
  CHECK(p.polling());  // four short gaps of the last eight
  CHECK(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 1);
  // Long gaps (a client that thinks between requests): polling stops once
  // fewer than half of the last eight were short. Five short gaps are in
  // the last eight, so the worker polls before each of the next five
  // sleeps (each poll looks for the whole window: 20 looks), then not.
  int polled = 0;
  for (int i = 0; i < 8; ++i) {
    looks = 0;
    p.poll([&] {
      ++looks;
      TestClock::advance(kLookTakes);
      return false;  // nothing came within the window
    });
    if (looks) {
      ++polled;
      CHECK(looks == 20);
    }
    TestClock::advance(std::chrono::milliseconds(5));
    p.work_found();
  }
  CHECK(polled == 5);
  CHECK_FALSE(p.polling());
  // Close gaps again: polling resumes after four.
  for (int i = 0; i < 4; ++i) gap_of(p, std::chrono::microseconds(500), looks);
  CHECK(p.polling());
}

TEST_CASE("busy polling configured off never polls", "[io]") {
  BusyPoll p(0);
  int looks = 0;
  for (int i = 0; i < 10; ++i) CHECK_FALSE(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 0);
  CHECK_FALSE(p.polling());
}
