// Why a login or a tree connect was refused, for the admin reading the
// journal: a client that only speaks NTLMv1, an SMB 2.x client at a share
// that requires encryption. Each reason is logged once per connection (a
// client retries the same request many times) and at most
// kRefusalLinesPerMinute lines a minute across the server, with the
// client's address and the structured fields of log_event
// (docs/monitoring.md).
#pragma once

#include <cstdint>
#include <string>

#include "smb2/engine/conn_state.hpp"

namespace ringsmb::smb2 {

enum class Refusal : uint8_t {
  Ntlmv1 = 1,                   // an NTLMv1 (or LM) response: only NTLMv2 is verified
  ShareRequiresEncryption = 2,  // smb3 encryption = required, the session cannot encrypt
};

inline constexpr uint32_t kRefusalLinesPerMinute = 20;

// Logs (Warn, event ntlmv1_refused) that USER's login from CONN was refused
// because its response is NTLMv1.
void log_ntlmv1_refused(ConnState& conn, const std::string& user, int64_t now_ms);
// Logs (Warn, event share_encryption_refused) that USER's tree connect to
// SHARE was refused for want of encryption; WHY says what the session
// lacks ("client dialect 2.1", "guest session", ...).
void log_share_encryption_refused(ConnState& conn, const std::string& user, const std::string& share,
                                  const std::string& why, int64_t now_ms);

// The part the tests drive: whether a line for WHY on CONN may be written
// at NOW_MS (marks it written; counts what the minute's limit drops).
bool refusal_may_log(ConnState& conn, Refusal why, int64_t now_ms);

}  // namespace ringsmb::smb2
