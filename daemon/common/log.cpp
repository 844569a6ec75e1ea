#include "common/log.hpp"

#include "common/log_event.hpp"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace ringsmb {

namespace {
std::atomic<int> g_setting{1};
std::atomic<int> g_level{int(LogLevel::Info)};
std::atomic<bool> g_syslog{false};
std::atomic<bool> g_pinned{false};
// Set once at start-up, before threads: plain globals.
const char* g_ident = nullptr;
bool g_ident_in_line = false;  // a journal stream shared with another program
constexpr const char* kSyslogEnv = "RINGSMB_LOG_SYSLOG";
constexpr const char* kJournalStdout = "/run/systemd/journal/stdout";

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

// syslog(3) priorities: LOG_ERR 3, LOG_WARNING 4, LOG_INFO 6, LOG_DEBUG 7.
constexpr int kPriority[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

bool journal_matches(const char* v, int fd) {
  unsigned long long dev = 0, ino = 0;
  struct stat st{};
  if (!v || sscanf(v, "%llu:%llu", &dev, &ino) != 2 || fstat(fd, &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

std::atomic<int> g_journal{-1};  // -1: not looked at yet

thread_local LogClient t_client;
thread_local bool t_client_active = false;
// The user and share in t_client are an earlier scope's, kept so that the
// next scope's log_client_about (the next request of the same session,
// mostly) finds them equal and copies nothing: they read as "".
thread_local bool t_about_stale = false;

void assign_changed(std::string& s, std::string_view v) {
  if (std::string_view(s) != v) s.assign(v);  // assign keeps the string's storage
}

LogClient& current_client() {
  if (t_about_stale) {
    t_client.user.clear();
    t_client.share.clear();
    t_about_stale = false;
  }
  return t_client;
}

// One line of text: the journal or a file each get one write per line, so
// lines of different threads never mix. A line about a client goes to the
// journal with its fields when it can.
void write_line(LogLevel level, std::string_view line) {
  if (stderr_is_journal()) {
    if (t_client_active && journal_send_line(level, line, current_client())) return;
    fprintf(stderr, "<%d>%s%s%.*s\n", kPriority[int(level)], g_ident_in_line ? log_identifier() : "",
            g_ident_in_line ? ": " : "", int(line.size()), line.data());
    return;
  }
  fprintf(stderr, "%s[%s] %.*s\n", log_identifier(), level_name(level), int(line.size()), line.data());
}

}  // namespace

// A scope per request: the strings are compared, not copied, when the
// connection and session are the ones of the thread's last scope.
LogClientScope::LogClientScope(std::string_view client, std::string_view user, std::string_view share) {
  if (t_client_active) outer_ = std::make_unique<LogClient>(current_client());
  assign_changed(t_client.client, client);
  if (user.empty() && share.empty()) {
    t_about_stale = true;
  } else {
    assign_changed(t_client.user, user);
    assign_changed(t_client.share, share);
    t_about_stale = false;
  }
  t_client_active = true;
}

LogClientScope::~LogClientScope() {
  if (outer_) {
    t_client = std::move(*outer_);
    t_about_stale = false;
    return;
  }
  t_client_active = false;
  t_about_stale = true;
}

const LogClient* log_client() { return t_client_active ? &current_client() : nullptr; }

void log_client_about(std::string_view user, std::string_view share) {
  if (!t_client_active) return;
  assign_changed(t_client.user, user);
  assign_changed(t_client.share, share);
  t_about_stale = false;
}

LogLevel log_level_for(int level) {
  if (level <= 0) return LogLevel::Warn;
  if (level == 1) return LogLevel::Info;
  return LogLevel::Debug;
}

void set_log_level(int level) {
  level = std::clamp(level, 0, kMaxLogLevel);
  g_setting = level;
  g_level = int(log_level_for(level));
}
void pin_log_level(int level) {
  set_log_level(level);
  g_pinned = true;
}

bool apply_configured_log_level(int level) {
  if (g_pinned.load()) return false;
  set_log_level(level);
  return true;
}

void set_log_level(LogLevel level) {
  g_setting = std::max(0, int(level) - 1);
  g_level = int(level);
}

int log_level_setting() { return g_setting.load(std::memory_order_relaxed); }
LogLevel log_level() { return LogLevel(g_level.load(std::memory_order_relaxed)); }

void set_log_identifier(const char* ident) { g_ident = ident; }
const char* log_identifier() { return g_ident ? g_ident : program_invocation_short_name; }

bool stderr_is_journal() {
  int known = g_journal.load(std::memory_order_relaxed);
  if (known < 0) {
    known = journal_matches(getenv("JOURNAL_STREAM"), STDERR_FILENO) ? 1 : 0;
    g_journal = known;
  }
  return known == 1;
}

void log_write(LogLevel level, const char* fmt, ...) {
  if (int(level) > g_level.load(std::memory_order_relaxed)) return;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  // A message of several lines (every error of a configuration file) is
  // logged as that many lines, each with its priority or prefix.
  std::string_view rest = text;
  while (true) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (g_syslog.load(std::memory_order_relaxed))
      syslog(kPriority[int(level)], "%.*s", int(line.size()), line.data());
    else
      write_line(level, line);
    if (nl == std::string_view::npos || nl + 1 == rest.size()) break;
    rest.remove_prefix(nl + 1);
  }
}

void log_lines(LogLevel level, const char* prefix, const std::string& text) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    log_write(level, "%s%s", prefix, line.c_str());
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
}

bool own_journal_stream(const char* ident) {
  set_log_identifier(ident);
  if (!stderr_is_journal()) return false;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  strcpy(sa.sun_path, kJournalStdout);
  // The stream header (systemd's journald-stream): identifier, unit, default
  // priority, whether lines carry "<N>", then syslog, kmsg and console
  // forwarding (all off).
  std::string header = std::string(ident) + "\n\n6\n1\n0\n0\n0\n";
  bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
            shutdown(fd, SHUT_RD) == 0 && write(fd, header.data(), header.size()) == ssize_t(header.size());
  if (!ok) {
    if (fd >= 0) close(fd);
    g_ident_in_line = true;
    return false;
  }
  fflush(stderr);
  dup2(fd, STDERR_FILENO);
  close(fd);
  struct stat st{};
  fstat(STDERR_FILENO, &st);
  std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  setenv("JOURNAL_STREAM", stream.c_str(), 1);
  return true;
}

void log_to_syslog(const char* ident) {
  set_log_identifier(ident);
  openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
  setenv(kSyslogEnv, "1", 1);
  g_syslog = true;
}

void log_to_syslog_if_inherited(const char* ident) {
  const char* v = getenv(kSyslogEnv);
  if (v && v[0] == '1') log_to_syslog(ident);
}

}  // namespace ringsmb
