#include "transport/delay_timer.hpp"

#include <chrono>

#include "smb2/leases/lease.hpp"

namespace ringsmb::transport {

DelayTimer::~DelayTimer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DelayTimer::schedule(int64_t due_ms, std::function<void()> fn) {
  bool earliest;
  {
    std::lock_guard lock(mu_);
    earliest = due_.empty() || due_ms < due_.begin()->first;
    due_.emplace(due_ms, std::move(fn));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  // A later deadline needs no wake-up: the thread already sleeps until an
  // earlier one (one FLUSH each schedules its interim here).
  if (earliest) cv_.notify_all();
}

void DelayTimer::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    int64_t wait_ms = due_.begin()->first - smb2::monotonic_ms();
    if (wait_ms > 0) {
      cv_.wait_for(lock, std::chrono::milliseconds(wait_ms));
      continue;
    }
    auto fn = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace ringsmb::transport
