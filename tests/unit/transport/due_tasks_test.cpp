// A worker's timed tasks: earliest first (equal deadlines in the order
// they came), and a task no longer wanted ends no wait.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>

#include "transport/due_tasks.hpp"

using namespace ringsmb;
using transport::DueTasks;

namespace {

std::shared_ptr<std::atomic<bool>> wanted_flag() { return std::make_shared<std::atomic<bool>>(true); }

}  // namespace

TEST_CASE("due tasks: the earliest first, equal deadlines in their order", "[transport][due_tasks]") {
  DueTasks d;
  CHECK(d.ms_until_due(100) == -1);
  d.add(130, 3, {});
  d.add(110, 1, {});
  d.add(130, 4, {});
  d.add(120, 2, {});
  CHECK(d.ms_until_due(100) == 10);
  DueTasks::Task t;
  CHECK_FALSE(d.take_due(109, t));
  CHECK(d.ms_until_due(125) == 0);  // late: due now, not negative
  std::vector<uint64_t> order;
  while (d.take_due(130, t)) order.push_back(t.conn_id);
  CHECK(order == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(d.size() == 0);
  CHECK(d.ms_until_due(130) == -1);
}

TEST_CASE("due tasks: one no longer wanted is dropped before the wait, not run", "[transport][due_tasks]") {
  DueTasks d;
  auto first = wanted_flag(), second = wanted_flag();
  d.add(110, 1, {}, first);
  d.add(150, 2, {}, second);
  CHECK(d.ms_until_due(100) == 10);
  *first = false;  // the WRITE completed before its deadline
  CHECK(d.ms_until_due(100) == 50);
  CHECK(d.size() == 1);
  *second = false;
  CHECK(d.ms_until_due(100) == -1);  // the reactor waits without a timeout again
  CHECK(d.size() == 0);
}

TEST_CASE("due tasks: a far deadline does not overflow the wait", "[transport][due_tasks]") {
  DueTasks d;
  d.add(INT64_MAX, 1, {});  // a login hold with no end set yet
  CHECK(d.ms_until_due(0) == INT_MAX);
}
