// Minimal leveled logging to stderr (systemd's journal picks it up).
#pragma once

namespace ringsmb {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_write(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace ringsmb

#define LOG_ERROR(...) ::ringsmb::log_write(::ringsmb::LogLevel::Error, __VA_ARGS__)
#define LOG_WARN(...) ::ringsmb::log_write(::ringsmb::LogLevel::Warn, __VA_ARGS__)
#define LOG_INFO(...) ::ringsmb::log_write(::ringsmb::LogLevel::Info, __VA_ARGS__)
#define LOG_DEBUG(...)                                                          \
  do {                                                                          \
    if (::ringsmb::log_level() >= ::ringsmb::LogLevel::Debug)                   \
      ::ringsmb::log_write(::ringsmb::LogLevel::Debug, __VA_ARGS__);            \
  } while (0)
