#include "smb2/engine/refusal_log.hpp"

#include <mutex>

#include "common/log_event.hpp"

namespace ringsmb::smb2 {
namespace {

// The minute's window, shared by every worker.
struct RefusalWindow {
  std::mutex mu;
  int64_t start_ms = 0;
  uint32_t logged = 0;
  uint32_t dropped = 0;
};

RefusalWindow& window() {
  static RefusalWindow w;
  return w;
}

}  // namespace

bool refusal_may_log(ConnState& conn, Refusal why, int64_t now_ms) {
  const auto bit = uint8_t(why);
  if (conn.refusals_logged & bit) return false;
  conn.refusals_logged |= bit;
  RefusalWindow& w = window();
  std::lock_guard lock(w.mu);
  if (w.logged == 0 && w.dropped == 0) w.start_ms = now_ms;
  if (now_ms - w.start_ms >= 60000) {
    if (w.dropped) LOG_WARN("refused logins and tree connects: %u more reasons in the last minute were not logged", w.dropped);
    w.start_ms = now_ms;
    w.logged = w.dropped = 0;
  }
  if (w.logged >= kRefusalLinesPerMinute) {
    ++w.dropped;
    return false;
  }
  ++w.logged;
  return true;
}

void log_ntlmv1_refused(ConnState& conn, const std::string& user, int64_t now_ms) {
  if (!refusal_may_log(conn, Refusal::Ntlmv1, now_ms)) return;
  const std::string name = log_printable(user);
  log_event(LogLevel::Warn, "ntlmv1_refused", {{"client", conn.client_address}, {"user", name}},
            "%s: login of '%s' refused: NTLMv1 is not accepted (the client sent an NTLMv1 response; "
            "ringsmbd verifies NTLMv2 only)",
            conn.client_address.c_str(), name.c_str());
}

void log_share_encryption_refused(ConnState& conn, const std::string& user, const std::string& share,
                                  const std::string& why, int64_t now_ms) {
  if (!refusal_may_log(conn, Refusal::ShareRequiresEncryption, now_ms)) return;
  const std::string name = log_printable(user);
  log_event(LogLevel::Warn, "share_encryption_refused",
            {{"client", conn.client_address}, {"user", name}, {"share", share}},
            "%s: tree connect of '%s' to [%s] refused: share requires encryption; %s", conn.client_address.c_str(),
            name.c_str(), share.c_str(), why.c_str());
}

}  // namespace ringsmb::smb2
