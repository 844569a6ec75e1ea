#include "common/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace ringsmb {

namespace {
std::atomic<int> g_level{int(LogLevel::Info)};
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}
}  // namespace

void set_log_level(LogLevel level) { g_level = int(level); }
LogLevel log_level() { return LogLevel(g_level.load(std::memory_order_relaxed)); }

void log_write(LogLevel level, const char* fmt, ...) {
  if (int(level) > g_level.load(std::memory_order_relaxed)) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  // One fprintf per line keeps lines from different threads whole.
  fprintf(stderr, "ringsmb[%s] %s\n", level_name(level), line);
}

}  // namespace ringsmb
