// BusyPoll: the worker polls before sleeping only while the recent gaps
// between bursts of work were within the window.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "io/reactor.hpp"

using ringsmb::io::BusyPoll;

namespace {

// One gap: poll() (whose looks find work at once, if it polls), then the
// work comes after `gap` (the "sleep").
bool gap_of(BusyPoll& p, std::chrono::microseconds gap, int& looks) {
  bool found = p.poll([&] {
    ++looks;
    return true;
  });
  if (!found) std::this_thread::sleep_for(gap);
  p.work_found();
  return found;
}

}  // namespace

TEST_CASE("busy polling starts when work keeps coming within the window, and stops when it does not", "[io]") {
  BusyPoll p(2000);  // 2 ms: the sleeps below are clearly inside or outside it
  int looks = 0;
  CHECK_FALSE(p.polling());  // a new worker sleeps at once
  for (int i = 0; i < 4; ++i) CHECK_FALSE(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 0);
  CHECK(p.polling());  // four short gaps of the last eight
  CHECK(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 1);
  // Long gaps (a client that thinks between requests): polling stops once
  // fewer than half of the last eight were short.
  int polled = 0;
  for (int i = 0; i < 8; ++i) {
    looks = 0;
    p.poll([&] {
      ++looks;
      return false;  // nothing came within the window
    });
    if (looks) ++polled;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    p.work_found();
  }
  CHECK(polled >= 1);
  CHECK(polled <= 5);
  CHECK_FALSE(p.polling());
}

TEST_CASE("busy polling configured off never polls", "[io]") {
  BusyPoll p(0);
  int looks = 0;
  for (int i = 0; i < 10; ++i) CHECK_FALSE(gap_of(p, std::chrono::microseconds(0), looks));
  CHECK(looks == 0);
  CHECK_FALSE(p.polling());
}
