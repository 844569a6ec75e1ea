#include "smb2/engine/clock.hpp"

#include <atomic>
#include <ctime>

namespace ringsmb::smb2 {
namespace {

std::atomic<ClockFn> installed{nullptr};

}  // namespace

int64_t monotonic_ms() {
  if (ClockFn fn = installed.load(std::memory_order_relaxed)) return fn();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

ClockFn set_clock(ClockFn fn) { return installed.exchange(fn); }

}  // namespace ringsmb::smb2
