// A few threads for the system calls that can block for long: an fsync of
// a file with much dirty data takes tens of milliseconds to seconds, and on
// a worker thread it would stall every other connection of that worker.
// Jobs run in submission order per thread; the pool is bounded by what
// submits (each FLUSH is a waiting request, limited per connection and per
// session by the async engine).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ringsmb {

class BlockingPool {
 public:
  explicit BlockingPool(unsigned threads);
  // Runs the jobs still queued, then joins the threads.
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // Thread-safe. JOB runs on one of the pool's threads.
  void submit(std::function<void()> job);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace ringsmb
