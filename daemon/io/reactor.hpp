// The network I/O backend behind one small interface: io_uring (multishot
// accept, multishot recv into a provided-buffer ring, sendmsg, POLLOUT polls) or epoll with
// plain syscalls where io_uring is unavailable. A worker thread owns one
// reactor; every callback runs on that thread.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/bytes.hpp"

namespace ringsmb::io {

class ReactorHandler {
 public:
  virtual ~ReactorHandler() = default;
  virtual void on_accept(int fd) = 0;
  // accept() on LISTEN_FD failed with ERR (EMFILE, ENFILE, ENOMEM...): the
  // reactor tries that listener again only after kAcceptRetryMs, so a
  // process out of descriptors does not spin; the handler may refuse the
  // waiting clients meanwhile (accept and close them) and logs.
  virtual void on_accept_failed(int listen_fd, int err) = 0;
  // `data` is only valid during the call.
  virtual void on_recv(uint64_t conn_id, ByteSpan data) = 0;
  // Receiving in place: where the connection's next bytes should go when
  // the handler wants them straight in their final place (the rest of a
  // large frame), or empty. A reactor that receives in place (see
  // Reactor::receives_in_place) asks after on_recv, receives into the
  // space itself and reports the count with on_recv_in_place.
  virtual std::span<uint8_t> recv_space(uint64_t conn_id) = 0;
  virtual void on_recv_in_place(uint64_t conn_id, size_t n) = 0;
  // After pause_recv, when the reactor's receive on the socket has ended
  // (its last bytes reported): until resume_recv, nothing takes bytes from
  // the socket, so another thread may (BulkReceiver). Not called when
  // recv_stopped() was already true at the pause.
  virtual void on_recv_stopped(uint64_t /*conn_id*/) {}
  // Receiving stopped for good: peer closed (err 0), or -errno.
  virtual void on_recv_end(uint64_t conn_id, int err) = 0;
  // The send of `start_send` or `queue_send` finished: bytes sent, or -errno.
  virtual void on_send(uint64_t conn_id, int result) = 0;
  // Asked before the reactor waits with CONN_ID's queue_send: whether the
  // handler needs that send's on_send before the wait (it has more to send
  // after it, or a receive to resume when it is out). When false, a send
  // that took everything may be reported after the wait, which then costs
  // no system call of its own.
  virtual bool wants_send_report(uint64_t /*conn_id*/) { return true; }
  // The socket of `wait_writable` has room to send (result >= 0), or the
  // wait ended with -errno (the connection is going away).
  virtual void on_writable(uint64_t conn_id, int result) = 0;
  // Another thread called wake().
  virtual void on_wake() = 0;
  // Called about every tick (timers: idle connections, lease timeouts).
  virtual void on_tick() = 0;
  // Asked after a tick and after any event while there is none: whether
  // the next tick is needed. When false, the reactor sleeps until an event
  // (an idle server wakes no CPU); it asks again after the next one.
  virtual bool wants_tick() { return true; }
  // The handler's own deadlines, finer than the tick: milliseconds until
  // the earliest (0: one is due now), or -1 when it has none. Asked before
  // every wait, which then ends by that time; on_due is called after every
  // wait and the completions it brought.
  virtual int ms_until_due() { return -1; }
  virtual void on_due() {}
  // A descriptor of watch_readable (TOKEN) has data to read. The handler
  // reads it until EAGAIN.
  virtual void on_readable(uint64_t /*token*/) {}
  // After look_again(): what had completed by then (the receives of data
  // that had arrived) has been taken in and handled.
  virtual void on_looked_again() {}
};

class Reactor {
 public:
  virtual ~Reactor() = default;
  virtual const char* name() const = 0;
  // Whether it uses ReactorHandler::recv_space. io_uring only can with
  // DEFER_TASKRUN: then its multishot recv takes bytes from the socket only
  // inside our own io_uring_enter, so a recv() between two enters cannot
  // race with it. Without it, task work (and so the ring's recv) may run at
  // the end of any syscall.
  virtual bool receives_in_place() const = 0;
  virtual void add_listener(int listen_fd) = 0;
  // Starts receiving on a connected socket until it ends.
  virtual void start_recv(uint64_t conn_id, int fd) = 0;
  // The handler sends inline: accepted sockets are non-blocking, so send()
  // and sendfile() return EAGAIN instead of blocking when the socket is
  // full. Then it uses one of these two (one at a time per connection):
  //
  // Sends `msg` when the socket has room (the caller keeps msg and its
  // iovecs alive until on_send). A short send reports the bytes sent.
  virtual void start_send(uint64_t conn_id, int fd, struct msghdr* msg) = 0;
  // Calls on_writable once when socket `fd` can take more data (or fails),
  // for what only the handler can send (sendfile).
  virtual void wait_writable(uint64_t conn_id, int fd) = 0;
  // Sends the SIZE bytes at DATA inside the system call with which the
  // reactor next waits for completions, instead of in one of its own; false
  // when this reactor cannot (then the handler sends inline). The send
  // never waits for room: on_send reports SIZE when the socket took it
  // all, else the bytes it took, or -errno (-EAGAIN: none, the socket was
  // full), and the handler goes on with start_send. DATA stays valid and
  // unchanged until on_send; one such send at a time per connection, and
  // no other send or wait meanwhile. A send that took everything may be
  // reported only after the reactor's next wait (see wants_send_report).
  virtual bool queue_send(uint64_t /*conn_id*/, int /*fd*/, const uint8_t* /*data*/, size_t /*size*/) {
    return false;
  }
  // Stops taking bytes from the connection's socket (its client is not
  // reading our replies: the kernel's buffers, then TCP, hold its next
  // requests back), and starts again. A few receives already in flight
  // may still be reported after pause_recv; the end of the stream is
  // reported only once receiving resumed.
  virtual void pause_recv(uint64_t conn_id) = 0;
  virtual void resume_recv(uint64_t conn_id) = 0;
  // Paused, and nothing of the reactor's own receives the socket any more
  // (see on_recv_stopped).
  virtual bool recv_stopped(uint64_t /*conn_id*/) const { return false; }
  // Moving a connection to another worker's reactor (transport::Worker's
  // bulk workers). release() forgets CONN_ID without closing its socket:
  // its receive is stopped (recv_stopped) and no send or wait of it is
  // pending. adopt() takes such a socket, as start_recv would but paused:
  // nothing is received until resume_recv; false if it cannot watch the
  // socket (then it does not know CONN_ID).
  virtual void release(uint64_t conn_id) = 0;
  virtual bool adopt(uint64_t conn_id, int fd) = 0;
  // Thread-safe: makes the owning thread call on_wake soon. Call it after
  // the work on_wake is to find is where on_wake looks: several calls
  // before on_wake runs may end in one on_wake.
  virtual void wake() = 0;
  // Calls on_readable(TOKEN) whenever non-blocking FD (not a connection's
  // socket: an inotify descriptor) has data, for as long as the reactor
  // lives; the caller keeps FD open that long. False where unsupported.
  virtual bool watch_readable(int /*fd*/, uint64_t /*token*/) { return false; }
  // Before it waits again, the reactor takes in what has completed by now,
  // without waiting, handles it, and then calls on_looked_again(): data
  // that arrived before this call is handled before what the caller keeps
  // for on_looked_again (a directory change read now reaches the
  // CHANGE_NOTIFY requests sent before it happened).
  virtual void look_again() = 0;
  // Runs until `stop` is set: checked at every event and tick (a wake()
  // after setting it ends a sleep without a tick).
  virtual void run(const std::atomic<bool>& stop) = 0;
};

// How long a listener rests after an accept() that failed for want of
// descriptors or memory.
inline constexpr int kAcceptRetryMs = 100;
// Rounds of look_again() one wake-up runs at most before on_looked_again
// (a flood of directory changes keeps asking).
inline constexpr int kMaxLooksAgain = 4;

struct ReactorOptions {
  int tick_ms = 1000;
  unsigned ring_entries = 512;
  unsigned recv_buffer_count = 128;     // power of two
  unsigned recv_buffer_size = 16384;
  // "worker busy poll": after handling completions, look for more for up
  // to this many microseconds before sleeping, while such looks have been
  // finding work (BusyPoll; 0: sleep at once). Saves the worker's wake-up
  // from a halted vCPU when requests follow each other closely.
  unsigned busy_poll_us = 0;
};

// Polling before a sleep, only while it pays (ReactorOptions::busy_poll_us).
// A poll pays when the next work comes within the window: the worker is
// still running and nobody has to wake it. When the gaps are longer (one
// client that thinks between requests) it only burns CPU and sleeps
// anyway. So each gap between running out of work and finding more is
// recorded, and the worker polls only while at least half of the last
// eight gaps were within the window: many connections on a worker poll,
// one client or an idle server does not. The gaps are measured while not
// polling too (two clock reads per sleep), so polling starts again when
// requests come closely again.
// The clock is a parameter so that a unit test can move time itself.
template <class Clock = std::chrono::steady_clock>
class BasicBusyPoll {
 public:
  explicit BasicBusyPoll(unsigned max_us)
      : window_(std::chrono::duration_cast<typename Clock::duration>(std::chrono::microseconds(max_us))) {}

  // Before sleeping: repeats `look` (a non-blocking look for work, true
  // when it found some) for up to the window if polling pays now; what
  // the last look said. Starts the gap.
  template <class Look>
  bool poll(Look look) {
    if (window_.count() == 0) return false;
    idle_since_ = Clock::now();
    if (!polling()) return false;
    const auto deadline = idle_since_ + window_;
    do {
      if (look()) return true;
    } while (Clock::now() < deadline);
    return false;
  }

  // Work came (by a look or after the sleep): ends the gap poll() started.
  void work_found() {
    if (window_.count() == 0) return;
    bool short_gap = Clock::now() - idle_since_ <= window_;
    recent_ = uint8_t((recent_ << 1) | (short_gap ? 1 : 0));
  }

  bool polling() const { return std::popcount(recent_) >= 4; }

 private:
  typename Clock::duration window_;
  typename Clock::time_point idle_since_{};
  uint8_t recent_ = 0;  // the last eight gaps, newest lowest: 1 = within the window
};
using BusyPoll = BasicBusyPoll<>;

// nullptr (with `why` set) when io_uring cannot be used here.
std::unique_ptr<Reactor> make_uring_reactor(ReactorHandler& handler, const ReactorOptions& opts,
                                            std::string& why);
std::unique_ptr<Reactor> make_epoll_reactor(ReactorHandler& handler, const ReactorOptions& opts);

}  // namespace ringsmb::io
