// Counters of one data-plane worker (docs/monitoring.md). Each worker owns
// one WorkerMetrics and only its own thread writes it: plain integers, no
// atomics and no lock on the request path. The admin endpoint reads them by
// posting a task to the worker (Worker::post), which copies them between
// two requests; the copies of all workers are then summed and rendered in
// the Prometheus text format.
//
// Per share and per user: each worker numbers the shares and users it has
// seen in its own ScopeTable. A tree connect and a login look the name up
// once and keep the slot in the Tree / Session (which live on the
// connection's worker); a request then adds to its slot by index. Workers
// number names independently; the tables are merged by name when read.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>
#include <time.h>

#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {

// Latency buckets: bucket k counts requests that took at most 2^k
// microseconds (1 us .. ~1 s), the last one everything slower (+Inf).
inline constexpr size_t kLatencyBuckets = 22;
// NTSTATUS severity (its top two bits, MS-ERREF 2.3): success,
// informational, warning, error.
inline constexpr size_t kStatusClasses = 4;

struct CommandMetrics {
  std::array<uint64_t, kStatusClasses> responses{};  // by NTSTATUS severity
  std::array<uint64_t, kLatencyBuckets> latency{};   // not cumulative
  uint64_t latency_sum_ns = 0;
};

// No share / user slot (state::Tree::metrics_slot, state::Session::metrics_slot).
inline constexpr uint32_t kNoScope = UINT32_MAX;
// Slots one worker's table keeps; names beyond share the last slot,
// labelled kOtherScope. Names come from the configuration (shares, users
// of the user database, the guest account), never from a client, so the
// bound is only a guard against a configuration that churns names.
inline constexpr size_t kMaxScopes = 1024;
inline constexpr const char* kOtherScope = "(other)";

// The counters of one share or one user on one worker.
struct ScopeMetrics {
  std::array<std::array<uint64_t, kStatusClasses>, wire::kCommandCount> responses{};  // by command, severity
  std::array<uint64_t, kLatencyBuckets> latency{};  // all commands; not cumulative
  uint64_t latency_sum_ns = 0;
  uint64_t bytes_read = 0;     // READ DataLength answered (files, streams, pipes)
  uint64_t bytes_written = 0;  // WRITE Count answered
  void add(const ScopeMetrics& o);
};

// The shares (or users) one worker has counted, by slot.
class ScopeTable {
 public:
  // NAME's slot, made on first use: at a tree connect or a login, not per
  // request (a hash lookup).
  uint32_t slot(const std::string& name);
  ScopeMetrics* at(uint32_t slot) { return slot < slots_.size() ? &slots_[slot] : nullptr; }
  const ScopeMetrics* find(const std::string& name) const;
  size_t size() const { return names_.size(); }
  const std::string& name(size_t slot) const { return names_[slot]; }
  const ScopeMetrics& metrics(size_t slot) const { return slots_[slot]; }
  // Adds O's counters to the slots of the same names (reading time).
  void add(const ScopeTable& o);

 private:
  std::vector<std::string> names_;
  std::vector<ScopeMetrics> slots_;
  std::unordered_map<std::string, uint32_t> index_;
};

struct WorkerMetrics {
  std::array<CommandMetrics, wire::kCommandCount> commands{};
  ScopeTable shares;
  ScopeTable users;
  uint64_t bytes_received = 0;  // TCP payload read from clients
  uint64_t bytes_received_off_worker = 0;  // of those, by the worker's BulkReceiver (large frames)
  uint64_t bytes_sent = 0;      // replies handed to the socket (READ data by sendfile included)
  uint64_t connections_accepted = 0;
  uint64_t connections_moved = 0;  // to a bulk worker (transport/worker.hpp), streaming large WRITEs
  uint64_t refused_max_connections = 0;
  uint64_t refused_per_address = 0;
  uint64_t refused_descriptors = 0;  // the descriptor budget, or accept() out of descriptors
  uint64_t login_failures = 0;       // SESSION_SETUP refused (bad password, unknown user, MIC)
  uint64_t logins_locked_out = 0;    // ... STATUS_ACCOUNT_LOCKED_OUT
  uint64_t breaks_sent = 0;          // oplock and lease break notifications
  uint64_t durable_kept = 0;         // durable opens kept after their connection ended
  uint64_t durable_reconnected = 0;  // ... reclaimed by a reconnect
  uint64_t durable_expired = 0;      // ... closed when their timeout ran out

  // One finished request: COMMAND answered STATUS after ELAPSED_NS, on
  // the share and for the user of slots SHARE and USER (kNoScope: none).
  void record(uint16_t command, uint32_t status, uint64_t elapsed_ns, uint32_t share = kNoScope,
              uint32_t user = kNoScope) {
    if (command >= wire::kCommandCount) return;
    size_t bucket = latency_bucket(elapsed_ns);
    CommandMetrics& m = commands[command];
    ++m.responses[status >> 30];
    ++m.latency[bucket];
    m.latency_sum_ns += elapsed_ns;
    for (ScopeMetrics* s : {shares.at(share), users.at(user)}) {
      if (!s) continue;
      ++s->responses[command][status >> 30];
      ++s->latency[bucket];
      s->latency_sum_ns += elapsed_ns;
    }
  }
  // File data a READ returned (READ true) or a WRITE wrote, on SHARE for USER.
  void record_data(bool read, uint64_t bytes, uint32_t share, uint32_t user) {
    for (ScopeMetrics* s : {shares.at(share), users.at(user)})
      if (s) (read ? s->bytes_read : s->bytes_written) += bytes;
  }
  static size_t latency_bucket(uint64_t ns) {
    uint64_t us = (ns + 999) / 1000;  // rounded up: bucket k holds <= 2^k us
    size_t k = us <= 1 ? 0 : size_t(64 - __builtin_clzll(us - 1));
    return k < kLatencyBuckets - 1 ? k : kLatencyBuckets - 1;
  }
  void add(const WorkerMetrics& o);
};

// The Prometheus text format (version 0.0.4) of M: counters and one
// latency histogram per command that has been used; per share and per user
// (share="...", user="..."), requests by command and severity (the
// non-zero ones), bytes read and written and one latency histogram.
std::string render_prometheus(const WorkerMetrics& m);

// CLOCK_MONOTONIC in ns (the vDSO: no system call).
inline uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace ringsmb::smb2
