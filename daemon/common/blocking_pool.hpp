// A few threads for the system calls that can block for long: an fsync of
// a file with much dirty data takes tens of milliseconds to seconds, and a
// large pwrite sleeps in the kernel's dirty-page throttling once the dirty
// data passes its limit; on a worker thread either would stall every other
// connection of that worker. Jobs start in submission order; the pool is
// bounded by what submits (each FLUSH and each large WRITE is a waiting
// request, limited per connection and per session by the async engine).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
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

  // Jobs submitted through one lane run one at a time, in submission
  // order (a connection's large WRITEs: a later one must not overtake an
  // earlier one), on whichever thread is free. Jobs of different lanes,
  // and plain jobs, run side by side.
  struct Lane {
    std::mutex mu;
    std::deque<std::function<void()>> jobs;  // guarded by mu
    bool running = false;                    // a thread is draining it; guarded by mu
  };
  // Thread-safe.
  void submit(const std::shared_ptr<Lane>& lane, std::function<void()> job);

 private:
  void run();
  static void drain(Lane& lane);

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace ringsmb
