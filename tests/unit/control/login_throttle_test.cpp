#include <catch2/catch.hpp>

#include "control/login_throttle.hpp"

using namespace ringsmb::control;

TEST_CASE("the login delay doubles per failure up to the maximum", "[throttle]") {
  LoginThrottle t;
  t.configure({200, 3000, 600, 0, 600});
  CHECK(t.delay_for(0) == 0);
  CHECK(t.delay_for(1) == 200);
  CHECK(t.delay_for(2) == 400);
  CHECK(t.delay_for(4) == 1600);
  CHECK(t.delay_for(5) == 3000);
  CHECK(t.delay_for(1000) == 3000);
  t.configure({0, 3000, 600, 0, 600});
  CHECK(t.delay_for(5) == 0);
}

TEST_CASE("failures slow their address and user; another address with the right password is not held", "[throttle]") {
  LoginThrottle t;
  t.configure({100, 10000, 600, 0, 600});
  int64_t now = 1000000;
  CHECK(t.before("10.0.0.1", "alice", now).delay_ms == 0);
  uint32_t last = 0;
  for (int i = 0; i < 5; ++i) {
    uint32_t d = t.failed("10.0.0.1", "alice", now);
    CHECK(d > last);
    last = d;
  }
  CHECK(last == 1600);
  // Every answer to the guessing address waits, even a success.
  CHECK(t.before("10.0.0.1", "bob", now).delay_ms == 1600);
  // Another address: nothing held before the check (a correct password is fast).
  auto other = t.before("10.0.0.2", "ALICE", now);
  CHECK(other.delay_ms == 0);
  CHECK_FALSE(other.locked_out);
  // ... but a wrong one there waits for the user's count.
  CHECK(t.failed("10.0.0.2", "alice", now) == 3200);
  // The counts are forgotten after the window.
  CHECK(t.before("10.0.0.1", "alice", now + 601 * 1000).delay_ms == 0);
}

TEST_CASE("the optional lockout refuses the account for its duration", "[throttle]") {
  LoginThrottle t;
  t.configure({0, 0, 600, 3, 60});
  int64_t now = 5000;
  for (int i = 0; i < 2; ++i) t.failed("10.0.0.1", "carol", now);
  CHECK_FALSE(t.before("10.0.0.9", "carol", now).locked_out);
  t.failed("10.0.0.1", "carol", now);
  CHECK(t.before("10.0.0.9", "Carol", now + 1000).locked_out);
  CHECK_FALSE(t.before("10.0.0.9", "dave", now + 1000).locked_out);
  CHECK_FALSE(t.before("10.0.0.9", "carol", now + 61 * 1000).locked_out);
}

TEST_CASE("a success clears the user's count, not the address's", "[throttle]") {
  LoginThrottle t;
  t.configure({100, 10000, 600, 0, 600});
  t.failed("10.0.0.1", "erin", 0);
  t.failed("10.0.0.1", "erin", 0);
  t.succeeded("erin");
  CHECK(t.failed("10.0.0.3", "erin", 0) == 100);         // the user's count starts again
  CHECK(t.before("10.0.0.1", "x", 0).delay_ms == 200);   // the address keeps its two
}

TEST_CASE("the tables stay bounded", "[throttle]") {
  LoginThrottle t;
  t.configure({100, 10000, 600, 0, 600});
  for (size_t i = 0; i < LoginThrottle::kMaxEntries + 100; ++i)
    t.failed("a" + std::to_string(i), "u" + std::to_string(i), int64_t(i));
  // The oldest entries were forgotten, the newest kept.
  CHECK(t.before("a0", "u0", 200000).delay_ms == 0);
  CHECK(t.before("a" + std::to_string(LoginThrottle::kMaxEntries + 99), "u", 200000).delay_ms == 100);
}
