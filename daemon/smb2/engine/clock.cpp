#include "smb2/engine/clock.hpp"

#include <ctime>

namespace ringsmb::smb2 {

int64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace ringsmb::smb2
