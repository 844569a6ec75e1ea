// Minimal leveled logging to stderr (systemd's journal picks it up), or to
// syslog once a daemon has detached from its terminal.
#pragma once

namespace ringsmb {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_write(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// A detached ringsmbd has no stderr: from here on lines go to syslog
// (facility daemon; the journal on a systemd machine) under IDENT, and
// programs it starts (ringsmb-ctld) are told through the environment.
void log_to_syslog(const char* ident);
// Follows the parent's choice (log_to_syslog) when it made one.
void log_to_syslog_if_inherited(const char* ident);

}  // namespace ringsmb

#define LOG_ERROR(...) ::ringsmb::log_write(::ringsmb::LogLevel::Error, __VA_ARGS__)
#define LOG_WARN(...) ::ringsmb::log_write(::ringsmb::LogLevel::Warn, __VA_ARGS__)
#define LOG_INFO(...) ::ringsmb::log_write(::ringsmb::LogLevel::Info, __VA_ARGS__)
#define LOG_DEBUG(...)                                                          \
  do {                                                                          \
    if (::ringsmb::log_level() >= ::ringsmb::LogLevel::Debug)                   \
      ::ringsmb::log_write(::ringsmb::LogLevel::Debug, __VA_ARGS__);            \
  } while (0)
