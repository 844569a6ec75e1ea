// Names of the joined domain's accounts from its directory, for LSA's
// lookups: a domain group's SID, which no PAC names, becomes
// "EXAMPLE\staff". The asking itself (a domain controller over LDAP:
// kerberos/ldap_directory.hpp) is a Backend given by control/; this class
// keeps its answers for a while and runs it on a thread of its own, so a
// slow or unreachable DC costs a lookup at most `wait_ms`, never more:
//
// - answers (found or not) are kept for `found_ttl_ms` / `missing_ttl_ms`;
// - a call waits for what it asked at most `wait_ms`, then answers with
//   what it has (the rest stays unmapped; the thread's answer serves the
//   next call);
// - after a failed asking, none is tried for `retry_after_ms` and calls do
//   not wait at all.
//
// The thread asks the Backend for nothing once when it starts (LDAP: it
// binds then). The clock is an input (now_ms), so the unit tests move time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rpc/domain_names.hpp"

namespace ringsmb::rpc {

class DirectoryNames {
 public:
  // Entries found for SIDS and account NAMES (names without their domain);
  // those not found are absent. An error when the directory was not reached.
  using Backend = std::function<std::expected<std::vector<DomainAccountName>, std::string>(
      const std::vector<Sid>& sids, const std::vector<std::string>& names)>;
  struct Options {
    std::string domain;     // the joined domain's NetBIOS name ("EXAMPLE")
    std::string dns_domain; // and its DNS name ("example.test"), also accepted in "DOMAIN\name"
    int64_t found_ttl_ms = 15 * 60 * 1000;
    int64_t missing_ttl_ms = 60 * 1000;
    int64_t wait_ms = 1500;  // below ringsmbd's 3 s wait for ctld (ipc/ctl_abi.hpp)
    int64_t retry_after_ms = 30 * 1000;
    size_t max_entries = 8192;
    size_t batch = 200;  // per asking
    std::function<int64_t()> now_ms;  // empty: the monotonic clock
  };

  DirectoryNames(Backend backend, Options options);
  ~DirectoryNames();
  DirectoryNames(const DirectoryNames&) = delete;
  DirectoryNames& operator=(const DirectoryNames&) = delete;

  // Looks SIDS up (only domain-account SIDs, S-1-5-21-a-b-c-rid, are
  // asked for); the answer has one element per SID.
  std::vector<std::optional<DomainAccountName>> by_sids(const std::vector<Sid>& sids);
  // Accounts "DOMAIN\name" of the joined domain (DOMAIN its NetBIOS or
  // DNS name, or none: an isolated name; other domains are not asked
  // for); one element per name.
  using QualifiedName = std::pair<std::string, std::string>;  // domain, name
  std::vector<std::optional<DomainAccountName>> by_names(const std::vector<QualifiedName>& names);
  // Whether the directory could not be asked lately (for tests and logs).
  bool failing() const;

 private:
  struct Cached {
    std::optional<DomainAccountName> entry;
    int64_t expires_ms = 0;
  };
  int64_t now() const;
  // Queues the keys not cached (fresh) and waits for them; lock held.
  void ask_and_wait(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys);
  std::optional<DomainAccountName> fresh(const std::string& key) const;  // lock held
  void store(const std::string& key, std::optional<DomainAccountName> entry, int64_t ttl_ms);  // lock held
  void run();
  void answer(const std::vector<std::string>& keys);  // the thread's asking, lock not held

  Backend backend_;
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable work_;   // the thread waits for keys
  std::condition_variable done_;   // callers wait for answers
  std::map<std::string, Cached> cache_;  // "sid:S-1-5-..." or "name:alice" -> answer
  std::deque<std::string> cache_order_;
  std::set<std::string> queued_;
  std::set<std::string> asking_;
  int64_t failed_until_ms_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// The process's directory (ringsmb-ctld sets it from the configuration of
// a domain member; null elsewhere). Pipes take it when they open.
void set_domain_directory(std::shared_ptr<DirectoryNames> directory);
std::shared_ptr<DirectoryNames> domain_directory();

}  // namespace ringsmb::rpc
