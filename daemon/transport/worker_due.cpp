// The worker's timed tasks (DueTasks): kept and run on its own thread,
// where its reactor's wait ends at the earliest.
#include <thread>
#include <utility>

#include "smb2/engine/clock.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {

void Worker::post_at(uint64_t conn_id, int64_t due_ms, smb2::ConnTask task, smb2::Wanted wanted) {
  // Without a thread (the unit tests' workers) the caller's is the worker's.
  if (!thread_.joinable() || thread_.get_id() == std::this_thread::get_id())
    return due_.add(due_ms, conn_id, std::move(task), std::move(wanted));
  post([this, conn_id, due_ms, task = std::move(task), wanted = std::move(wanted)]() mutable {
    due_.add(due_ms, conn_id, std::move(task), std::move(wanted));
  });
}

int Worker::ms_until_due() { return due_.size() ? due_.ms_until_due(smb2::monotonic_ms()) : -1; }

// A task may add another (a hold extended meanwhile is armed again): it
// runs in this loop only if it is due already.
void Worker::on_due() {
  if (!due_.size()) return;
  active_since_tick_ = true;
  int64_t now = smb2::monotonic_ms();
  DueTasks::Task t;
  while (due_.take_due(now, t)) {
    if (t.task) run_conn_task(t.conn_id, t.task);
    else release_hold(t.conn_id);
  }
}

}  // namespace ringsmb::transport
