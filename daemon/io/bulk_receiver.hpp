// Receives the rest of large frames on a thread of its own (the
// interface: a worker's unit tests use a fake one).
//
// A worker thread serves many connections; copying a 1-8 MiB WRITE payload
// out of a socket takes it 0.3-3 ms on a small VM, and every other
// connection's request waits that long behind it (the flush row of
// bench/run: a small-file client's p99 latency went from 80 us to 350-600
// us while another client on the same worker wrote 100 MiB files, and to
// 110-140 us when that writer was served by another process). So once a
// large frame's header is in, the worker stops its own receiving on that
// socket and gives this thread the frame's remaining bytes to fill, in
// place; the worker gets the whole frame back and goes on.
//
// One thread per worker, with an epoll set of the sockets it is filling:
// a client that announces a large frame and stalls costs a registration,
// not a thread. The sockets are non-blocking (accepted so).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ringsmb::io {

class BulkReceiver {
 public:
  // Bytes of the next frame's header taken after a frame's body, when the
  // socket already had them: the worker then knows at once whether the
  // next frame is large too, without its own receive in between.
  static constexpr size_t kHeaderSize = 4;
  // Bytes received from one socket before the others' turn.
  static constexpr size_t kSliceBytes = 1 << 20;

  struct Job {
    uint64_t conn_id = 0;
    int fd = -1;
    std::span<uint8_t> body;  // filled in order; stays valid until the job's Done
    // After a full body, take the next frame's header if it is there
    // already (a job that fills a header itself says false).
    bool then_header = true;
    // Nonzero: BODY begins with the next frame's header. Once the header is
    // in, a frame of at least frame_min bytes that fits in BODY is received
    // whole in the same job (one hand-over to the owner per frame, not
    // two); another ends the job after the header.
    size_t frame_min = 0;
    size_t received = 0;  // the receiver's progress (0 when submitted)
  };
  struct Done {
    uint64_t conn_id = 0;
    size_t received = 0;  // of the body, from its start
    uint8_t header[kHeaderSize] = {};
    size_t header_len = 0;  // bytes of the next frame's header, after a full body
    bool failed = false;    // end of stream or an error before the body was full
  };
  // Runs on the receiver's thread: hands DONE to the job's owner (a
  // worker's post()). Done is the last use of the job's fd and body.
  using OnDone = std::function<void(const Done&)>;

  virtual ~BulkReceiver() = default;
  // Thread-safe. At most one job per socket at a time, and nobody else
  // receives from it meanwhile.
  virtual void submit(const Job& job) = 0;
};

// The receiver: one thread, an epoll set of the sockets it is filling.
class ThreadBulkReceiver final : public BulkReceiver {
 public:
  explicit ThreadBulkReceiver(OnDone on_done);
  // Stops the thread; jobs still running end without a Done.
  ~ThreadBulkReceiver() override;
  ThreadBulkReceiver(const ThreadBulkReceiver&) = delete;
  ThreadBulkReceiver& operator=(const ThreadBulkReceiver&) = delete;

  // Creates the epoll set and starts the thread, its nice value raised by
  // NICE (a bulk worker's receiver); false if the system refused (then
  // the caller receives as before).
  bool start(unsigned nice = 0);
  void submit(const Job& job) override;

 private:
  void run(unsigned nice);
  void take_submitted();
  // Receives what FD's job can take now; true when the job is done.
  bool fill(Job& job, Done& done);
  // A frame_min job's header is in: BODY shrinks to its frame's end, or to
  // nothing when the frame is small or does not fit.
  static void shape_frame(Job& job);
  void finish(uint64_t conn_id, Done& done);

  OnDone on_done_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Job> submitted_;  // guarded by mu_
  bool stopping_ = false;       // guarded by mu_
  std::unordered_map<uint64_t, Job> jobs_;  // the thread's own
};

}  // namespace ringsmb::io
