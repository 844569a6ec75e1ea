// Lowering one thread's CPU priority (the bulk workers' threads).
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

namespace ringsmb {

// Adds DELTA to the calling thread's nice value, up to 19. On Linux
// PRIO_PROCESS with 0 names the calling thread, not the whole process;
// raising one's own nice value needs no privilege.
inline void lower_this_thread_priority(unsigned delta) {
  if (delta == 0) return;
  errno = 0;
  int now = getpriority(PRIO_PROCESS, 0);
  if (now == -1 && errno != 0) return;
  setpriority(PRIO_PROCESS, 0, std::min(19, now + int(std::min(delta, 39u))));
}

}  // namespace ringsmb
