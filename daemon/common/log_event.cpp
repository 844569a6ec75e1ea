#include "common/log_event.hpp"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ringsmb {
namespace {

constexpr const char* kJournalSocket = "/run/systemd/journal/socket";

bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._:@/+-", c);
}

std::string upper(const char* key) {
  std::string k;
  for (const char* p = key; *p; ++p) k += (*p >= 'a' && *p <= 'z') ? char(*p - 32) : *p;
  return k;
}

// The journal's name of a field: the client, user and share under the
// names an administrator filters on whatever the event, the rest ours.
std::string journal_key(const char* key) {
  for (const char* known : {"client", "user", "share"})
    if (strcmp(key, known) == 0) return "SMB_" + upper(key);
  return "RINGSMB_" + upper(key);
}

bool has_field(std::initializer_list<LogField> fields, const char* key) {
  for (const LogField& f : fields)
    if (strcmp(f.key, key) == 0) return true;
  return false;
}

void journal_field(std::string& d, const std::string& key, std::string_view value) {
  if (value.find('\n') == std::string_view::npos) {
    d += key + "=";
    d += value;
    d += '\n';
    return;
  }
  // The binary form: KEY \n, the length as 64-bit little endian, the value, \n.
  d += key + "\n";
  uint64_t n = value.size();
  for (int i = 0; i < 8; ++i) d += char((n >> (8 * i)) & 0xff);
  d += value;
  d += '\n';
}

}  // namespace

std::string log_printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) out += (c > 0x20 && c < 0x7f) ? char(c) : '?';
  return out.empty() ? "-" : out;
}

std::string event_suffix(const char* event, std::initializer_list<LogField> fields) {
  std::string s = " | event=";
  s += event;
  for (const LogField& f : fields) {
    s += ' ';
    s += f.key;
    s += '=';
    bool plain = !f.value.empty();
    for (char c : f.value) plain = plain && plain_char(c);
    if (plain) {
      s += f.value;
      continue;
    }
    s += '"';
    for (char c : f.value) {
      if (c == '"' || c == '\\') s += '\\';
      s += (c == '\n') ? ' ' : c;
    }
    s += '"';
  }
  return s;
}

std::string journal_datagram(LogLevel level, const char* identifier, std::string_view message, const char* event,
                             std::initializer_list<LogField> fields, const LogClient* scope) {
  static constexpr int kPriority[] = {3, 4, 6, 7};  // err, warning, info, debug
  std::string d;
  journal_field(d, "MESSAGE", message);
  journal_field(d, "PRIORITY", std::to_string(kPriority[int(level)]));
  journal_field(d, "SYSLOG_IDENTIFIER", identifier);
  if (event) journal_field(d, "RINGSMB_EVENT", event);
  for (const LogField& f : fields) journal_field(d, journal_key(f.key), f.value);
  if (!scope) return d;
  for (const LogField& f : {LogField{"client", scope->client}, LogField{"user", scope->user},
                            LogField{"share", scope->share}})
    if (!f.value.empty() && !has_field(fields, f.key)) journal_field(d, journal_key(f.key), f.value);
  return d;
}

bool journal_send_line(LogLevel level, std::string_view line, const LogClient& scope) {
  return journal_send(kJournalSocket, journal_datagram(level, log_identifier(), line, nullptr, {}, &scope));
}

bool journal_send(const char* path, const std::string& datagram) {
  static std::mutex mu;  // one socket for the process, opened at the first event
  static int fd = -1;
  std::lock_guard lock(mu);
  if (fd < 0) fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof sa.sun_path) return false;
  strcpy(sa.sun_path, path);
  return sendto(fd, datagram.data(), datagram.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&sa), sizeof sa) ==
         ssize_t(datagram.size());
}

void log_event(LogLevel level, const char* event, std::initializer_list<LogField> fields, const char* fmt, ...) {
  if (int(level) > int(log_level())) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::string message = line + event_suffix(event, fields);
  if (stderr_is_journal() &&
      journal_send(kJournalSocket, journal_datagram(level, log_identifier(), message, event, fields, log_client())))
    return;
  log_write(level, "%s", message.c_str());  // stderr or syslog, as every other line
}

}  // namespace ringsmb
