#include "control/login_throttle.hpp"

#include <algorithm>
#include <cctype>

#include "common/log.hpp"
#include "common/log_event.hpp"

namespace ringsmb::control {
namespace {

// fail2ban reads these lines; more than this many a minute would only
// flood the log, the summary line says how many were left out.
constexpr uint32_t kLogLinesPerMinute = 60;

std::string fold(const std::string& user) {
  std::string k = user;
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return k;
}

// Keeps a log line to one line whatever a client put in the name.
std::string printable(const std::string& s) { return log_printable(s); }

}  // namespace

void LoginThrottle::configure(const ThrottleSettings& s) {
  std::lock_guard lock(mu_);
  s_ = s;
}

uint32_t LoginThrottle::delay_for(uint32_t failures) const {
  if (failures == 0 || s_.base_delay_ms == 0) return 0;
  uint64_t d = uint64_t(s_.base_delay_ms) << std::min<uint32_t>(failures - 1, 20);
  return uint32_t(std::min<uint64_t>(d, s_.max_delay_ms));
}

LoginThrottle::Count* LoginThrottle::live(Table& t, const std::string& key, int64_t now_ms) {
  auto it = t.find(key);
  if (it == t.end()) return nullptr;
  Count& c = it->second;
  bool expired = now_ms - c.last_ms > int64_t(s_.window_s) * 1000 && now_ms >= c.locked_until_ms;
  if (expired) {
    t.erase(it);
    return nullptr;
  }
  return &c;
}

LoginThrottle::Count& LoginThrottle::bump(Table& t, const std::string& key, int64_t now_ms) {
  Count* c = live(t, key, now_ms);
  if (!c) {
    if (t.size() >= kMaxEntries) {
      auto oldest = std::min_element(t.begin(), t.end(),
                                     [](const auto& a, const auto& b) { return a.second.last_ms < b.second.last_ms; });
      t.erase(oldest);
    }
    c = &t[key];
  }
  c->failures = std::min<uint32_t>(c->failures + 1, 1u << 30);
  c->last_ms = now_ms;
  return *c;
}

LoginThrottle::Before LoginThrottle::before(const std::string& address, const std::string& user, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Before b;
  if (s_.base_delay_ms == 0 && s_.lockout_threshold == 0) return b;
  if (Count* a = live(by_address_, address, now_ms)) b.delay_ms = delay_for(a->failures);
  if (Count* u = live(by_user_, fold(user), now_ms)) b.locked_out = now_ms < u->locked_until_ms;
  return b;
}

uint32_t LoginThrottle::failed(const std::string& address, const std::string& user, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Count& a = bump(by_address_, address, now_ms);
  Count& u = bump(by_user_, fold(user), now_ms);
  if (s_.lockout_threshold && u.failures >= s_.lockout_threshold && now_ms >= u.locked_until_ms) {
    u.locked_until_ms = now_ms + int64_t(s_.lockout_duration_s) * 1000;
    log_event(LogLevel::Warn, "account_locked_out", {{"client", printable(address)}, {"user", printable(user)}},
              "account locked out: user=%s for %u s after %u failures (last client=%s)", printable(user).c_str(),
              s_.lockout_duration_s, u.failures, printable(address).c_str());
  }
  log_failure(address, user, a.failures, u.failures, now_ms);
  return std::max(delay_for(a.failures), delay_for(u.failures));
}

void LoginThrottle::succeeded(const std::string& user) {
  std::lock_guard lock(mu_);
  auto it = by_user_.find(fold(user));
  if (it != by_user_.end() && it->second.locked_until_ms == 0) by_user_.erase(it);
}

void LoginThrottle::log_failure(const std::string& address, const std::string& user, uint32_t addr_n,
                                uint32_t user_n, int64_t now_ms) {
  if (now_ms - log_window_ms_ >= 60000) {
    if (not_logged_) LOG_WARN("authentication failure: %u more failures in the last minute were not logged", not_logged_);
    log_window_ms_ = now_ms;
    logged_ = not_logged_ = 0;
  }
  if (logged_ >= kLogLinesPerMinute) {
    ++not_logged_;
    return;
  }
  ++logged_;
  log_event(LogLevel::Warn, "login_failure", {{"client", printable(address)}, {"user", printable(user)}},
            "authentication failure: client=%s user=%s (failures: %u from this client, %u for this user)",
            printable(address).c_str(), printable(user).c_str(), addr_n, user_n);
}

std::shared_ptr<LoginThrottle> shared_login_throttle() {
  static auto throttle = std::make_shared<LoginThrottle>();
  return throttle;
}

}  // namespace ringsmb::control
