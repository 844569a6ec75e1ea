// Slows password guessing (issue 11, defect 8). Failures are counted per
// client address and per user name; each count decays to zero after
// `window` without a failure. The answer to a login is held back (by the
// data plane, without blocking a worker: LoginReply::delay_ms):
//   * every login from an address with recent failures waits
//     delay(failures of the address), success or not, so a guesser cannot
//     tell a failure early by the missing success;
//   * a failed login also waits delay(failures of the user), so guessing
//     one user's password from many addresses gets slow too; a correct
//     password from another address is not held by the user's count;
// with delay(n) = min(base * 2^(n-1), max). Optional lockout (Windows'
// account lockout threshold / duration): after `threshold` failures of a
// user within the window the account is refused (ACCOUNT_LOCKED_OUT) for
// `duration`, even with the right password. Off by default, so a guesser
// behind the same address as a legitimate user only slows that user down.
// Thread-safe; tables are bounded (the oldest entry is forgotten).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ringsmb::control {

struct ThrottleSettings {
  uint32_t base_delay_ms = 200;  // 0: no throttle at all
  uint32_t max_delay_ms = 10000;
  uint32_t window_s = 600;
  uint32_t lockout_threshold = 0;  // 0: never lock an account
  uint32_t lockout_duration_s = 600;
};

class LoginThrottle {
 public:
  static constexpr size_t kMaxEntries = 16384;  // per table

  void configure(const ThrottleSettings& s);
  // Before the password check: the delay every answer to ADDRESS gets, and
  // whether USER is locked out.
  struct Before {
    uint32_t delay_ms = 0;
    bool locked_out = false;
  };
  Before before(const std::string& address, const std::string& user, int64_t now_ms);
  // After the check: records the outcome; returns the delay for this answer.
  uint32_t failed(const std::string& address, const std::string& user, int64_t now_ms);
  void succeeded(const std::string& user);

  uint32_t delay_for(uint32_t failures) const;

 private:
  struct Count {
    uint32_t failures = 0;
    int64_t last_ms = 0;
    int64_t locked_until_ms = 0;
  };
  using Table = std::unordered_map<std::string, Count>;
  Count* live(Table& t, const std::string& key, int64_t now_ms);
  Count& bump(Table& t, const std::string& key, int64_t now_ms);
  void log_failure(const std::string& address, const std::string& user, uint32_t addr_n, uint32_t user_n,
                   int64_t now_ms);

  std::mutex mu_;
  ThrottleSettings s_;
  Table by_address_, by_user_;
  int64_t log_window_ms_ = 0;
  uint32_t logged_ = 0, not_logged_ = 0;
};

// The process's throttle: the policy engine is re-created on every reload,
// the failure counts must outlive it.
std::shared_ptr<LoginThrottle> shared_login_throttle();

}  // namespace ringsmb::control
