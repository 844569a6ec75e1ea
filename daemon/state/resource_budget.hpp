// What every client together may make the process hold, shared by all
// workers (docs/security.md, "Resource limits"): descriptors (connections
// plus open files, with a reserve kept back so that a new client is still
// served or refused cleanly), open files per user, and connections per
// client address. Nothing here is on the per-request path except two
// relaxed atomic increments per CREATE and CLOSE.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ringsmb::state {

// One open file counted against the process and its user for the open's
// life; the destructor gives it back.
class OpenCharge {
 public:
  OpenCharge() = default;
  OpenCharge(std::atomic<uint32_t>* total, std::atomic<uint32_t>* user);
  OpenCharge(OpenCharge&& o) noexcept : total_(o.total_), user_(o.user_) { o.total_ = o.user_ = nullptr; }
  OpenCharge& operator=(OpenCharge&& o) noexcept;
  OpenCharge(const OpenCharge&) = delete;
  OpenCharge& operator=(const OpenCharge&) = delete;
  ~OpenCharge() { release(); }

 private:
  void release();
  std::atomic<uint32_t>* total_ = nullptr;
  std::atomic<uint32_t>* user_ = nullptr;
};

class ResourceBudget {
 public:
  // From RLIMIT_NOFILE and the descriptors the daemon itself holds once it
  // is set up (OWN: rings, eventfds, listeners, control plane, log), before
  // it accepts. A sixteenth of the limit (at least 32, at most 1024) is a
  // reserve on top, for what the daemon opens later (sendfile's dups,
  // /metrics and admin clients, a restarted ringsmb-ctld) and for refusing
  // clients cleanly: accept() must never be the one to run out. The rest
  // (`usable`) is for connections and open files; open files may take it
  // only up to another reserve, so a new connection still fits when files
  // used up their share.
  void set_descriptor_limit(uint64_t nofile, uint64_t own);
  uint32_t usable_descriptors() const { return usable_; }
  uint32_t reserve() const { return reserve_; }
  // Whether one more connection fits, with `connections` open now.
  bool connection_fits(uint32_t connections) const {
    return uint64_t(connections) + open_files.load(std::memory_order_relaxed) < usable_;
  }
  // Whether one more open file fits.
  bool open_file_fits(uint32_t connections) const {
    return uint64_t(connections) + open_files.load(std::memory_order_relaxed) + reserve_ < usable_;
  }

  // The open-file count of USER (the same counter for the life of the
  // process; at session setup, not per request).
  std::atomic<uint32_t>* user_open_count(const std::string& user);

  // Counts a connection from ADDRESS; false (and nothing counted) when
  // LIMIT (0: none) connections from there are open already.
  bool add_connection_from(const std::string& address, uint32_t limit);
  void remove_connection_from(const std::string& address);

  std::atomic<uint32_t> open_files{0};  // regular files and directories, over all workers

 private:
  uint32_t usable_ = UINT32_MAX;
  uint32_t reserve_ = 0;
  std::mutex mu_;
  // Entries are never removed: one per user name that logged in, so the
  // pointers handed out stay valid.
  std::unordered_map<std::string, std::unique_ptr<std::atomic<uint32_t>>> user_opens_;  // guarded by mu_
  std::unordered_map<std::string, uint32_t> per_address_;  // guarded by mu_
};

}  // namespace ringsmb::state
