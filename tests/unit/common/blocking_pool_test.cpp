#include "common/blocking_pool.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

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
