// A fake io::Reactor for the transport tests: it records what the worker
// (or a ConnReader) asks of it, and the test plays the kernel's part.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <vector>

#include "io/bulk_receiver.hpp"
#include "io/reactor.hpp"

namespace ringsmb::test {

// Records what the worker asks of its reactor; the test completes it.
class FakeReactor final : public io::Reactor {
 public:
  explicit FakeReactor(bool in_place = false) : in_place_(in_place) {}
  const char* name() const override { return "fake"; }
  bool receives_in_place() const override { return in_place_; }
  void add_listener(int) override {}
  void start_recv(uint64_t conn_id, int) override { receiving.push_back(conn_id); }
  void start_send(uint64_t conn_id, int, struct msghdr* msg) override { sends.push_back({conn_id, msg}); }
  void wait_writable(uint64_t conn_id, int) override { writable_waits.push_back(conn_id); }
  bool queue_send(uint64_t conn_id, int, const uint8_t* data, size_t size) override {
    if (!queues_sends) return false;
    queued_sends.push_back({conn_id, data, size});
    return true;
  }
  void pause_recv(uint64_t conn_id) override { paused.push_back(conn_id); }
  void resume_recv(uint64_t conn_id) override { resumed.push_back(conn_id); }
  void release(uint64_t conn_id) override { released.push_back(conn_id); }
  bool adopt(uint64_t conn_id, int) override {
    adopted.push_back(conn_id);
    return adopt_ok;
  }
  bool recv_stopped(uint64_t conn_id) const override {
    return stopped_at_once && !paused.empty() && paused.back() == conn_id;
  }
  void wake() override { ++wakes; }
  void look_again() override { ++looks; }  // the test calls on_looked_again
  void run(const std::atomic<bool>&) override {}

  struct Send {
    uint64_t conn_id;
    msghdr* msg;
  };
  // A queue_send the test completes (with on_send), as io_uring's would.
  struct QueuedSend {
    uint64_t conn_id;
    const uint8_t* data;
    size_t size;
  };
  std::vector<uint64_t> receiving;
  std::vector<Send> sends;
  bool queues_sends = false;  // like io_uring (queue_send); else like epoll
  std::vector<QueuedSend> queued_sends;
  std::vector<uint64_t> writable_waits;
  std::vector<uint64_t> paused, resumed;
  std::vector<uint64_t> released, adopted;
  size_t wakes = 0;
  size_t looks = 0;
  bool adopt_ok = true;
  // Like epoll: a paused receive has stopped at once (no on_recv_stopped).
  bool stopped_at_once = false;

 private:
  bool in_place_;
};

// Keeps the jobs a worker submits; the test fills their buffers and hands
// the worker the Done (Worker::on_off_worker_done), as the receiver's
// thread would through post().
class FakeBulkReceiver final : public io::BulkReceiver {
 public:
  void submit(const Job& job) override { jobs.push_back(job); }
  std::vector<Job> jobs;
};

}  // namespace ringsmb::test
