// Runs callbacks at a monotonic time, on its own thread (started on first
// use). A worker uses it to wake itself when a held reply is due (the login
// throttle): the callback only posts to the worker, whose reactor has no
// timers finer than its tick. Stopped and joined by the destructor.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace ringsmb::transport {

class DelayTimer {
 public:
  DelayTimer() = default;
  ~DelayTimer();
  DelayTimer(const DelayTimer&) = delete;
  DelayTimer& operator=(const DelayTimer&) = delete;

  // Thread-safe: runs FN on the timer thread at DUE_MS (smb2::monotonic_ms).
  void schedule(int64_t due_ms, std::function<void()> fn);

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<int64_t, std::function<void()>> due_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ringsmb::transport
