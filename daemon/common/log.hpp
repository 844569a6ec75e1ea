// Leveled logging. Where the lines go:
// - stderr is the journal (systemd: $JOURNAL_STREAM names stderr's device
//   and inode): each line starts with its syslog priority, "<3>" for an
//   error ... "<7>" for debug (sd-daemon(3)), so `journalctl -p err` finds
//   errors; the journal adds the program's name;
// - a terminal or a file: "IDENT[level] message", IDENT the program
//   (ringsmbd, ringsmb-ctld);
// - syslog, once a daemon has detached from its terminal.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace ringsmb {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

// The `log level` key's scale (Samba's), used everywhere a level is given
// (the key, -d, `ringsmbctl debug`): 0 errors and warnings, 1 notices (the
// default), 2 and more debug, up to kMaxLogLevel.
inline constexpr int kMaxLogLevel = 10;
LogLevel log_level_for(int level);

// Sets the level on the key's scale (clamped to 0..kMaxLogLevel).
void set_log_level(int level);
// Sets the level itself; LogLevel::Error, below the key's scale, is for
// tests and fuzzers that must not log a warning per input.
void set_log_level(LogLevel level);
int log_level_setting();  // the number last set
// -d on the command line: the configuration file's level (at start and on
// reload) no longer applies; `ringsmbctl debug` still does.
void pin_log_level(int level);
// The configuration file's level; false (and nothing changed) when pinned.
bool apply_configured_log_level(int level);
LogLevel log_level();
void log_write(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Each line of TEXT as its own log line, PREFIX before it ("reload: ").
void log_lines(LogLevel level, const char* prefix, const std::string& text);

// The client, user and share a log line is about.
struct LogClient {
  std::string client;  // the address, as in the line ("192.0.2.7")
  std::string user;    // "" until known
  std::string share;   // "" outside a tree connect
};

// While a LogClientScope lives, every line its thread logs is about that
// client: under the journal each is sent with the fields SMB_CLIENT,
// SMB_USER and SMB_SHARE (common/log_event.hpp), so that
// `journalctl SMB_CLIENT=192.0.2.7` or `SMB_USER=alice` finds them.
// The transport opens one around the work it does for a connection; the
// request path adds the session's user and the tree's share once known.
// A scope opened within another one (rare) restores it when it ends.
class LogClientScope {
 public:
  explicit LogClientScope(std::string_view client, std::string_view user = {}, std::string_view share = {});
  ~LogClientScope();
  LogClientScope(const LogClientScope&) = delete;
  LogClientScope& operator=(const LogClientScope&) = delete;

 private:
  std::unique_ptr<LogClient> outer_;
};
// The innermost scope's client of this thread; null outside any.
const LogClient* log_client();
// Sets the user and share of this thread's innermost scope (none: nothing).
void log_client_about(std::string_view user, std::string_view share);

// The name in stderr lines and syslog, e.g. "ringsmbd"; the program's file
// name until set.
void set_log_identifier(const char* ident);
const char* log_identifier();

// True when stderr is a stream to the journal ($JOURNAL_STREAM).
bool stderr_is_journal();
// A program that writes to a journal stream opened by another one (ringsmb-ctld
// spawned by ringsmbd) would be shown under that program's name. This
// gives it a stream of its own, under IDENT, on stderr; false (and stderr
// as it was) when the journal cannot be reached, and lines then carry
// "IDENT: " after the priority.
bool own_journal_stream(const char* ident);

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
