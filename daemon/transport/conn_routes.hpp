// Where a connection lives once it has left the worker that accepted it.
//
// A connection's address (state::ConnAddress: the accepting worker and
// the connection id) is its identity everywhere: lease holders, waiting
// CREATEs, blocking locks and durable opens keep it. A connection that
// streams large WRITEs moves to a bulk worker (transport/worker.hpp) and
// keeps that address; tasks for it are routed here to where it is now.
// Connection ids are unique across workers, so the id alone is the key.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace ringsmb::transport {

class Worker;

class ConnRoutes {
 public:
  // CONN_ID now lives on WORKER (until erase).
  void set(uint64_t conn_id, Worker* worker) {
    std::lock_guard lock(mu_);
    if (moved_.insert_or_assign(conn_id, worker).second) count_.fetch_add(1, std::memory_order_relaxed);
  }
  void erase(uint64_t conn_id) {
    std::lock_guard lock(mu_);
    if (moved_.erase(conn_id)) count_.fetch_sub(1, std::memory_order_relaxed);
  }
  // The worker CONN_ID moved to, or null when it never moved (or is gone).
  // Without any moved connection: one relaxed load, no lock.
  Worker* moved_to(uint64_t conn_id) const {
    if (count_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(mu_);
    auto it = moved_.find(conn_id);
    return it == moved_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Worker*> moved_;  // guarded by mu_
  std::atomic<size_t> count_{0};
};

}  // namespace ringsmb::transport
