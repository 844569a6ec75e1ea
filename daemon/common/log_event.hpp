// Log lines an operator acts on (login failures, lockouts, refused share
// access, limits hit) with structured fields (docs/monitoring.md):
// - under systemd (stderr is the journal: $JOURNAL_STREAM matches it), sent
//   with the journal's native protocol carrying RINGSMB_EVENT, SMB_CLIENT,
//   SMB_USER, SMB_SHARE, RINGSMB_<KEY> for the other keys, beside MESSAGE
//   (journalctl RINGSMB_EVENT=login_failure); no libsystemd needed: the
//   protocol is a datagram of KEY=value lines on
//   /run/systemd/journal/socket. Every other line about a client (within a
//   LogClientScope, common/log.hpp) goes the same way with SMB_CLIENT,
//   SMB_USER and SMB_SHARE;
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
// (EVENT null: none), SMB_CLIENT, SMB_USER, SMB_SHARE for those keys and
// RINGSMB_<KEY> for the others (the binary form where a value holds a
// newline); then what SCOPE knows of the client and the fields lack (its
// empty values left out).
std::string journal_datagram(LogLevel level, const char* identifier, std::string_view message, const char* event,
                             std::initializer_list<LogField> fields, const LogClient* scope = nullptr);
// A plain line about SCOPE's client, sent to the journal; false when it
// cannot be (the caller writes it to stderr).
bool journal_send_line(LogLevel level, std::string_view line, const LogClient& scope);
// Sends DATAGRAM to the journal socket at PATH; false when it cannot.
bool journal_send(const char* path, const std::string& datagram);

}  // namespace ringsmb
