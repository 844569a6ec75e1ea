// A worker's timed tasks: a deferred interim response (smb2::defer_interim,
// a slow large WRITE or FLUSH) and a held login answer (the login
// throttle). They live on the worker's own thread: its reactor's wait ends
// at the earliest (io::ReactorHandler::ms_until_due) and the due ones run
// after it, so arming and cancelling one wakes no other thread.
#pragma once

#include <cstdint>
#include <vector>

#include "smb2/engine/server_context.hpp"

namespace ringsmb::transport {

class DueTasks {
 public:
  struct Task {
    int64_t due_ms = 0;  // smb2::monotonic_ms()
    uint64_t seq = 0;    // the order of add(): equal deadlines run in it
    uint64_t conn_id = 0;
    // Empty: the connection's held login answer is due (Worker::release_hold).
    smb2::ConnTask task;
    // False by its time (the WRITE completed, was cancelled, or its
    // connection went): dropped unrun. Null: always wanted.
    smb2::Wanted wanted;
  };

  void add(int64_t due_ms, uint64_t conn_id, smb2::ConnTask task, smb2::Wanted wanted = {});
  // Milliseconds from NOW until the earliest wanted task (0: one is due),
  // or -1 when none is left. The unwanted ones met on the way are dropped:
  // a WRITE done before its deadline ends no wait.
  int ms_until_due(int64_t now);
  // Takes the earliest wanted task if it is due by NOW; the unwanted ones
  // due by then are dropped on the way (their flag is read here, on the
  // worker's thread, just before the task would run).
  bool take_due(int64_t now, Task& out);
  size_t size() const { return heap_.size(); }

 private:
  void pop(Task* out);
  std::vector<Task> heap_;  // a min-heap by (due_ms, seq)
  uint64_t next_seq_ = 0;
};

}  // namespace ringsmb::transport
