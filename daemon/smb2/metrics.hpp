// Counters of one data-plane worker (docs/monitoring.md). Each worker owns
// one WorkerMetrics and only its own thread writes it: plain integers, no
// atomics and no lock on the request path. The admin endpoint reads them by
// posting a task to the worker (Worker::post), which copies them between
// two requests; the copies of all workers are then summed and rendered in
// the Prometheus text format.
#pragma once

#include <array>
#include <cstdint>
#include <string>
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

struct WorkerMetrics {
  std::array<CommandMetrics, wire::kCommandCount> commands{};
  uint64_t bytes_received = 0;  // TCP payload read from clients
  uint64_t bytes_sent = 0;      // replies handed to the socket (READ data by sendfile included)
  uint64_t connections_accepted = 0;
  uint64_t refused_max_connections = 0;
  uint64_t refused_per_address = 0;
  uint64_t refused_descriptors = 0;  // the descriptor budget, or accept() out of descriptors
  uint64_t login_failures = 0;       // SESSION_SETUP refused (bad password, unknown user, MIC)
  uint64_t logins_locked_out = 0;    // ... STATUS_ACCOUNT_LOCKED_OUT
  uint64_t breaks_sent = 0;          // oplock and lease break notifications
  uint64_t durable_kept = 0;         // durable opens kept after their connection ended
  uint64_t durable_reconnected = 0;  // ... reclaimed by a reconnect
  uint64_t durable_expired = 0;      // ... closed when their timeout ran out

  // One finished request: COMMAND answered STATUS after ELAPSED_NS.
  void record(uint16_t command, uint32_t status, uint64_t elapsed_ns) {
    if (command >= wire::kCommandCount) return;
    CommandMetrics& m = commands[command];
    ++m.responses[status >> 30];
    ++m.latency[latency_bucket(elapsed_ns)];
    m.latency_sum_ns += elapsed_ns;
  }
  static size_t latency_bucket(uint64_t ns) {
    uint64_t us = (ns + 999) / 1000;  // rounded up: bucket k holds <= 2^k us
    size_t k = us <= 1 ? 0 : size_t(64 - __builtin_clzll(us - 1));
    return k < kLatencyBuckets - 1 ? k : kLatencyBuckets - 1;
  }
  void add(const WorkerMetrics& o);
};

// The Prometheus text format (version 0.0.4) of M: counters and one
// latency histogram per command that has been used.
std::string render_prometheus(const WorkerMetrics& m);

// CLOCK_MONOTONIC in ns (the vDSO: no system call).
inline uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace ringsmb::smb2
