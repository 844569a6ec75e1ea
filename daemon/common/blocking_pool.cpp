#include "common/blocking_pool.hpp"

#include <pthread.h>

namespace ringsmb {

BlockingPool::BlockingPool(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

BlockingPool::~BlockingPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BlockingPool::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void BlockingPool::submit(const std::shared_ptr<Lane>& lane, std::function<void()> job) {
  {
    std::lock_guard lock(lane->mu);
    lane->jobs.push_back(std::move(job));
    if (lane->running) return;  // the thread draining the lane takes it
    lane->running = true;
  }
  submit([lane] { drain(*lane); });
}

void BlockingPool::drain(Lane& lane) {
  for (;;) {
    std::function<void()> job;
    {
      std::lock_guard lock(lane.mu);
      if (lane.jobs.empty()) {
        lane.running = false;
        return;
      }
      job = std::move(lane.jobs.front());
      lane.jobs.pop_front();
    }
    job();
  }
}

void BlockingPool::run() {
  pthread_setname_np(pthread_self(), "ringsmbd-block");
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace ringsmb
