// A clock the test moves (smb2/engine/clock.hpp): in place for the life of
// the object, so a test of a timeout advances it instead of sleeping.
#pragma once

#include <atomic>
#include <cstdint>

#include "smb2/engine/clock.hpp"

namespace ringsmb::smb2::test {

class ManualClock {
 public:
  explicit ManualClock(int64_t start_ms = 1'000'000) {
    now_ms_ = start_ms;
    previous_ = set_clock(&read);
  }
  ~ManualClock() { set_clock(previous_); }
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;
  void advance(int64_t ms) { now_ms_ += ms; }
  int64_t now() const { return now_ms_; }

 private:
  static int64_t read() { return now_ms_.load(std::memory_order_relaxed); }
  static inline std::atomic<int64_t> now_ms_{0};
  ClockFn previous_ = nullptr;
};

}  // namespace ringsmb::smb2::test
