#include "common/log.hpp"

#include <syslog.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace ringsmb {

namespace {
std::atomic<int> g_level{int(LogLevel::Info)};
std::atomic<bool> g_syslog{false};
constexpr const char* kSyslogEnv = "RINGSMB_LOG_SYSLOG";
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
  if (g_syslog.load(std::memory_order_relaxed)) {
    static constexpr int kPriority[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    syslog(kPriority[int(level)], "%s", line);
    return;
  }
  // One fprintf per line keeps lines from different threads whole.
  fprintf(stderr, "ringsmb[%s] %s\n", level_name(level), line);
}

void log_to_syslog(const char* ident) {
  openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
  setenv(kSyslogEnv, "1", 1);
  g_syslog = true;
}

void log_to_syslog_if_inherited(const char* ident) {
  const char* v = getenv(kSyslogEnv);
  if (v && v[0] == '1') log_to_syslog(ident);
}

}  // namespace ringsmb
