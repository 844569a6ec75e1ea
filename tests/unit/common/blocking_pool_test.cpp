#include "common/blocking_pool.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

using ringsmb::BlockingPool;

TEST_CASE("blocking pool: jobs run off the submitting thread", "[blocking_pool]") {
  BlockingPool pool(2);
  std::promise<std::thread::id> ran_on;
  pool.submit([&] { ran_on.set_value(std::this_thread::get_id()); });
  auto f = ran_on.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(f.get() != std::this_thread::get_id());
}

TEST_CASE("blocking pool: a blocked job does not hold up the other thread", "[blocking_pool]") {
  BlockingPool pool(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  pool.submit([released] { released.wait(); });
  std::promise<void> second;
  pool.submit([&] { second.set_value(); });
  CHECK(second.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  release.set_value();
}

TEST_CASE("blocking pool: destruction runs every queued job first", "[blocking_pool]") {
  std::atomic<int> done{0};
  {
    BlockingPool pool(1);
    for (int i = 0; i < 100; ++i)
      pool.submit([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++done;
      });
  }
  CHECK(done == 100);
}

TEST_CASE("blocking pool: a lane runs its jobs one at a time, in order", "[blocking_pool]") {
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  {
    BlockingPool pool(4);
    auto lane = std::make_shared<BlockingPool::Lane>();
    for (int i = 0; i < 200; ++i)
      pool.submit(lane, [&, i] {
        if (running.fetch_add(1) != 0) overlapped = true;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        order.push_back(i);  // one at a time: no lock needed
        running.fetch_sub(1);
      });
  }
  CHECK_FALSE(overlapped);
  REQUIRE(order.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(order[size_t(i)] == i);
}

TEST_CASE("blocking pool: a busy lane does not hold up plain jobs or other lanes", "[blocking_pool]") {
  BlockingPool pool(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto a = std::make_shared<BlockingPool::Lane>(), b = std::make_shared<BlockingPool::Lane>();
  pool.submit(a, [released] { released.wait(); });
  std::promise<void> other;
  pool.submit(b, [&] { other.set_value(); });
  CHECK(other.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  release.set_value();
}
