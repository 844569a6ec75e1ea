// Log lines an operator acts on (login failures, lockouts, refused share
// access, limits hit) with structured fields (docs/monitoring.md):
// - under systemd (stderr is the journal: $JOURNAL_STREAM matches it), sent
//   with the journal's native protocol carrying RINGSMB_EVENT, RINGSMB_CLIENT,
//   RINGSMB_USER, RINGSMB_SHARE, ... beside MESSAGE (journalctl
//   RINGSMB_EVENT=login_failure); no libsystemd needed: the protocol is a
//   datagram of KEY=value lines on /run/systemd/journal/socket;
// - otherwise (stderr, or syslog once detached) the line as before with a
//   stable " | event=NAME key=value..." suffix that fail2ban can match.
// The message text ends with that suffix in both cases.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "common/log.hpp"

namespace ringsmb {

struct LogField {
  const char* key;  // lower case: client, user, share, session_id, limit
  std::string_view value;
};

void log_event(LogLevel level, const char* event, std::initializer_list<LogField> fields, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// A name a client chose (a user name), made safe for one log line: at most
// 64 characters, anything outside printable ASCII (and space) as '?', "-"
// for an empty one.
std::string log_printable(const std::string& s);

// The parts, for the tests.
// " | event=NAME key=value ...": a value with other characters than
// [A-Za-z0-9._:@/+-] is quoted ("...", with \" and \\), an empty one is "".
std::string event_suffix(const char* event, std::initializer_list<LogField> fields);
// The journal datagram: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, RINGSMB_EVENT
// and RINGSMB_<KEY> for each field (the binary form where a value holds a
// newline).
std::string journal_datagram(LogLevel level, const char* identifier, const std::string& message, const char* event,
                             std::initializer_list<LogField> fields);
// Sends DATAGRAM to the journal socket at PATH; false when it cannot.
bool journal_send(const char* path, const std::string& datagram);

}  // namespace ringsmb
