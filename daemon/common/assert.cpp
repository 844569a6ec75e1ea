#include "common/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace ringsmb {

void assertion_failed(const char* cond, const char* file, int line, const char* func) {
  // stderr, not the log: the logger may be what is broken, and the
  // journal keeps stderr too.
  std::fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", file, line, func, cond);
  std::fflush(stderr);
  std::abort();
}

}  // namespace ringsmb
