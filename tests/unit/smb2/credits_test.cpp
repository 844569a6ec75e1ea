#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "smb2/engine/credits.hpp"

using ringsmb::smb2::CreditWindow;

namespace {

// Grants `n` credits and makes them visible, as a sent response does.
void give(CreditWindow& w, uint16_t n, uint32_t max = 8192) {
  w.grant(n, max);
  w.commit();
}

}  // namespace

TEST_CASE("credit window: a fresh connection may use message id 0 once") {
  CreditWindow w;
  CHECK_FALSE(w.consume(1, 1));
  CHECK(w.consume(0, 1));
  CHECK_FALSE(w.consume(0, 1));
  CHECK(w.outstanding() == 0);
}

TEST_CASE("credit window: granted ids are usable only after commit") {
  CreditWindow w;
  REQUIRE(w.consume(0, 1));
  w.grant(4, 8192);
  CHECK_FALSE(w.consume(1, 1));
  w.commit();
  CHECK(w.outstanding() == 4);
  CHECK(w.consume(1, 1));
  CHECK(w.consume(2, 3));
  CHECK_FALSE(w.consume(5, 1));
}

TEST_CASE("credit window: ids may be used out of order, each exactly once") {
  CreditWindow w;
  REQUIRE(w.consume(0, 1));
  give(w, 10);
  CHECK(w.consume(7, 1));
  CHECK(w.consume(3, 2));
  CHECK_FALSE(w.consume(4, 1));
  CHECK_FALSE(w.consume(6, 2));  // 7 is taken
  CHECK(w.consume(1, 2));
  CHECK(w.consume(5, 2));
  CHECK(w.consume(8, 3));
  CHECK(w.outstanding() == 0);
  CHECK_FALSE(w.consume(11, 1));
}

TEST_CASE("credit window: the grant keeps the outstanding total under the limit") {
  CreditWindow w;
  REQUIRE(w.consume(0, 1));
  CHECK(w.grant(100, 16) == 16);
  w.commit();
  CHECK(w.grant(100, 16) == 0);
  // A client left with no credit still gets one.
  for (uint64_t id = 1; id <= 16; ++id) REQUIRE(w.consume(id, 1));
  CHECK(w.grant(0, 16) == 1);
}

TEST_CASE("credit window: a wide window with a hole at the bottom grows and keeps every id") {
  CreditWindow w;
  REQUIRE(w.consume(0, 1));
  give(w, 5000);
  // Leave id 1 unused so the window cannot slide, and use the rest.
  for (uint64_t id = 2; id <= 5000; ++id) REQUIRE(w.consume(id, 1));
  CHECK(w.outstanding() == 1);
  for (uint64_t id = 2; id <= 5000; id += 999) CHECK_FALSE(w.consume(id, 1));
  CHECK(w.consume(1, 1));
  CHECK(w.outstanding() == 0);
  give(w, 3);
  CHECK(w.consume(5003, 1));
  CHECK(w.consume(5001, 2));
}

TEST_CASE("credit window: a long random run matches a model, across many wraps of the ring") {
  CreditWindow w;
  REQUIRE(w.consume(0, 1));
  std::mt19937 rng(7);
  uint64_t low = 1, high = 1;
  std::vector<bool> used;  // model: used[id - low]
  for (int step = 0; step < 200000; ++step) {
    if (high - low < 200 && rng() % 4 == 0) {
      uint16_t n = uint16_t(1 + rng() % 64);
      give(w, n);
      high += n;
      used.resize(high - low, false);
    }
    if (high == low) continue;
    uint64_t id = low + rng() % (high - low + 2);  // sometimes beyond the window
    uint16_t charge = uint16_t(1 + rng() % 3);
    bool expect = id + charge <= high;
    for (uint64_t i = id; expect && i < id + charge; ++i) expect = !used[i - low];
    REQUIRE(w.consume(id, charge) == expect);
    if (!expect) continue;
    for (uint64_t i = id; i < id + charge; ++i) used[i - low] = true;
    while (!used.empty() && used.front()) {
      used.erase(used.begin());
      ++low;
    }
  }
}
