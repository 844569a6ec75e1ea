// io_uring backend: one ring per worker thread, SINGLE_ISSUER|DEFER_TASKRUN
// when the kernel has them, multishot accept, multishot recv into a
// provided-buffer ring (set up by hand: liburing 2.3 lacks
// io_uring_setup_buf_ring), sendmsg for what a full socket did not take,
// a POLLOUT poll for what only the worker can send (sendfile), a multishot
// poll of an eventfd for cross-thread wake-ups, a re-armed timeout for
// the tick while the handler wants one, and a timed wait while it has a
// deadline. Replies go out in the io_uring_enter that waits for the next
// completions (queue_send), not in a send() of their own. With
// DEFER_TASKRUN it also receives the rest of a large frame in place
// (ReactorHandler::recv_space) with plain recv() calls between two
// io_uring_enters.
#include <liburing.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "common/wake_fd.hpp"
#include "io/reactor.hpp"
#include "io/uring_queued_send.hpp"

namespace ringsmb::io {
namespace {

enum class Op : uint8_t {
  Accept = 1, Recv = 2, Send = 3, Wake = 4, Ignore = 5, Tick = 6, Writable = 7, AcceptRetry = 8, Readable = 9,
  QueuedSend = 10
};
constexpr uint64_t kIdMask = (uint64_t(1) << 56) - 1;
uint64_t pack(Op op, uint64_t id) { return (uint64_t(op) << 56) | (id & kIdMask); }
Op op_of(uint64_t ud) { return Op(ud >> 56); }
uint64_t id_of(uint64_t ud) { return ud & kIdMask; }
constexpr int kBufferGroup = 0;
constexpr unsigned kBatchSize = 256;     // CQEs handled per look at the ring
constexpr size_t kMaxLookahead = 64;    // CQEs searched for a connection's queued bytes
constexpr size_t kInPlaceBudget = 8 << 20;  // bytes received in place per completion, for fairness

class UringReactor final : public Reactor {
 public:
  UringReactor(ReactorHandler& h, const ReactorOptions& o) : handler_(h), opts_(o) {}
  ~UringReactor() override;
  bool init(std::string& why);

  const char* name() const override { return "io_uring"; }
  bool receives_in_place() const override { return defer_taskrun_; }
  void add_listener(int fd) override;
  void start_recv(uint64_t conn_id, int fd) override;
  void start_send(uint64_t conn_id, int fd, struct msghdr* msg) override;
  void wait_writable(uint64_t conn_id, int fd) override;
  bool queue_send(uint64_t conn_id, int fd, const uint8_t* data, size_t size) override;
  void pause_recv(uint64_t conn_id) override;
  void resume_recv(uint64_t conn_id) override;
  bool recv_stopped(uint64_t conn_id) const override;
  void release(uint64_t conn_id) override { recv_fds_.erase(conn_id); }
  bool adopt(uint64_t conn_id, int fd) override {
    recv_fds_[conn_id] = Receiving{fd, true, false};
    return true;
  }
  void wake() override;
  bool watch_readable(int fd, uint64_t token) override;
  void look_again() override { look_again_ = true; }
  void run(const std::atomic<bool>& stop) override;

 private:
  void arm_readable(uint64_t token);
  io_uring_sqe* sqe();
  bool setup_buffer_ring(std::string& why);
  void recycle_buffer(uint16_t bid);
  void arm_wake();
  void handle_wake(const io_uring_cqe* cqe);
  void arm_tick();
  void arm_recv(uint64_t conn_id, int fd);
  void handle_accept(int listen_fd, const io_uring_cqe* cqe);
  void handle(const io_uring_cqe* cqe);
  void handle_recv(uint64_t conn_id, const io_uring_cqe* cqe);
  void handle_batch();
  int wait();
  void handle_cqes();
  bool may_recv_in_place(uint64_t conn_id) const;
  void recv_in_place(uint64_t conn_id);
  void note_submitted();
  void handle_queued_send_failure(uint64_t tag, int result);
  void report_taken_sends();
  bool sends_need_report_now();

  ReactorHandler& handler_;
  ReactorOptions opts_;
  BusyPoll busy_poll_{opts_.busy_poll_us};
  io_uring ring_{};
  bool ring_ok_ = false;
  bool disabled_ = true;  // created with IORING_SETUP_R_DISABLED
  bool defer_taskrun_ = false;
  // The CQEs being handled (they stay put until io_uring_cq_advance) and
  // the position in them, and whether a submit entered the kernel since
  // they were taken (it may have posted more).
  std::vector<io_uring_cqe*> batch_ = std::vector<io_uring_cqe*>(kBatchSize);
  size_t batch_count_ = 0;
  size_t batch_pos_ = 0;
  bool entered_in_batch_ = false;
  io_uring_buf_ring* buf_ring_ = nullptr;
  size_t buf_ring_bytes_ = 0;
  uint8_t* buffers_ = nullptr;
  WakeFd wake_fd_;
  // A wake-up is on its way (the eventfd written, its poll not handled
  // yet): further posts need not write it again.
  std::atomic<bool> wake_pending_{false};
  bool look_again_ = false;  // look_again(): handle_batch looks for more before it returns
  bool wake_armed_ = false;
  __kernel_timespec tick_ts_{};
  bool tick_armed_ = false;  // off while the handler wants no tick
  __kernel_timespec accept_retry_ts_{0, kAcceptRetryMs * 1000000LL};  // never changed
  // The connections still receiving: their fd, for re-arming after the
  // kernel ends a multishot recv early (out of buffers), and whether the
  // handler paused them and their multishot recv is still armed.
  struct Receiving {
    int fd = -1;
    bool paused = false;
    bool armed = false;
  };
  std::unordered_map<uint64_t, Receiving> recv_fds_;
  std::unordered_map<uint64_t, int> readable_fds_;  // watch_readable: token -> fd
  // queue_send: whether this kernel runs such a send as it must
  // (queued_sends_work), and the sends from their queue_send to their
  // report. A taken send is finished: whether it failed (or sent less) its
  // CQE says, already posted; no CQE means all was sent.
  bool queued_sends_ = false;
  QueuedSends sends_;
  std::vector<QueuedSends::Failure> send_failures_;  // report_taken_sends's, kept for its capacity
};

UringReactor::~UringReactor() {
  if (ring_ok_) io_uring_queue_exit(&ring_);
  if (buf_ring_) munmap(buf_ring_, buf_ring_bytes_);
  delete[] buffers_;
}

bool UringReactor::init(std::string& why) {
  io_uring_params p{};
  // The ring is set up on the main thread but used by the worker thread:
  // create it disabled and enable it from the worker (run), which makes
  // that thread the single issuer.
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN |
            IORING_SETUP_R_DISABLED;
  int rc = io_uring_queue_init_params(opts_.ring_entries, &ring_, &p);
  defer_taskrun_ = rc == 0;
  if (rc == -EINVAL) {  // older kernel: no SINGLE_ISSUER / DEFER_TASKRUN
    p = {};
    disabled_ = false;
    rc = io_uring_queue_init_params(opts_.ring_entries, &ring_, &p);
  }
  if (rc < 0) {
    why = std::string("io_uring_queue_init: ") + strerror(-rc);
    return false;
  }
  ring_ok_ = true;
  if (!(p.features & IORING_FEAT_FAST_POLL) || !(p.features & IORING_FEAT_EXT_ARG)) {
    why = "kernel io_uring lacks FEAT_FAST_POLL or FEAT_EXT_ARG";
    return false;
  }
  queued_sends_ = queued_sends_work(p.flags & ~unsigned(IORING_SETUP_R_DISABLED));
  // Bound the io-wq threads that punted operations (if any) may spawn.
  unsigned max_workers[2] = {2, 2};
  io_uring_register_iowq_max_workers(&ring_, max_workers);
  if (!setup_buffer_ring(why)) return false;
  if (!wake_fd_.valid()) {
    why = "eventfd for the worker's wake-ups failed (out of descriptors or memory)";
    return false;
  }
  arm_wake();
  arm_tick();
  return true;
}

bool UringReactor::setup_buffer_ring(std::string& why) {
  unsigned n = opts_.recv_buffer_count;
  buf_ring_bytes_ = n * sizeof(io_uring_buf);
  void* mem = mmap(nullptr, buf_ring_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) {
    why = "mmap of the buffer ring failed";
    return false;
  }
  buf_ring_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(buf_ring_);
  reg.ring_entries = n;
  reg.bgid = kBufferGroup;
  int rc = io_uring_register_buf_ring(&ring_, &reg, 0);
  if (rc < 0) {
    why = std::string("io_uring_register_buf_ring: ") + strerror(-rc);
    return false;
  }
  io_uring_buf_ring_init(buf_ring_);
  buffers_ = new uint8_t[size_t(n) * opts_.recv_buffer_size];
  for (unsigned i = 0; i < n; ++i)
    io_uring_buf_ring_add(buf_ring_, buffers_ + size_t(i) * opts_.recv_buffer_size, opts_.recv_buffer_size,
                          uint16_t(i), io_uring_buf_ring_mask(n), int(i));
  io_uring_buf_ring_advance(buf_ring_, int(n));
  return true;
}

void UringReactor::recycle_buffer(uint16_t bid) {
  io_uring_buf_ring_add(buf_ring_, buffers_ + size_t(bid) * opts_.recv_buffer_size, opts_.recv_buffer_size, bid,
                        io_uring_buf_ring_mask(opts_.recv_buffer_count), 0);
  io_uring_buf_ring_advance(buf_ring_, 1);
}

io_uring_sqe* UringReactor::sqe() {
  io_uring_sqe* s = io_uring_get_sqe(&ring_);
  if (!s) {
    entered_in_batch_ = true;
    io_uring_submit(&ring_);
    note_submitted();
    s = io_uring_get_sqe(&ring_);
  }
  return s;  // never null after a submit with an empty queue
}

// A multishot poll, not a read re-armed after each wake-up: per wake-up a
// read cost the worker the read's issue, its retry after the poll fired
// and a fresh poll registration (a sixth of its CPU while a client streamed
// 1 MiB WRITEs, two wake-ups per WRITE). The counter is drained with a
// plain read() when the poll fires.
void UringReactor::arm_wake() {
  io_uring_sqe* s = sqe();
  io_uring_prep_poll_multishot(s, wake_fd_.fd(), POLLIN);
  io_uring_sqe_set_data64(s, pack(Op::Wake, 0));
  wake_armed_ = true;
}

void UringReactor::handle_wake(const io_uring_cqe* cqe) {
  if (!(cqe->flags & IORING_CQE_F_MORE)) wake_armed_ = false;  // ended (CQ overflow, error): armed again below
  if (cqe->res < 0 && cqe->res != -ECANCELED) LOG_ERROR("poll of the wake-up eventfd: %s", strerror(-cqe->res));
  // Cleared before the posted tasks are taken: a post after this point
  // writes the eventfd again (see wake()).
  wake_pending_.exchange(false, std::memory_order_seq_cst);
  wake_fd_.clear();  // EAGAIN: a write that found a wake-up pending, drained by an earlier read
  if (!wake_armed_) arm_wake();
  handler_.on_wake();
}

// The tick is a timeout operation of its own, re-armed when it fires, so
// waiting for completions sets no timer: a wait with a timeout arms and
// cancels an hrtimer on every request, and reprogramming the timer is a VM
// exit on a guest.
void UringReactor::arm_tick() {
  tick_ts_ = {opts_.tick_ms / 1000, (opts_.tick_ms % 1000) * 1000000LL};
  io_uring_sqe* s = sqe();
  io_uring_prep_timeout(s, &tick_ts_, 0, 0);
  io_uring_sqe_set_data64(s, pack(Op::Tick, 0));
  tick_armed_ = true;
}

void UringReactor::add_listener(int fd) {
  io_uring_sqe* s = sqe();
  // Non-blocking: the worker sends inline and sendfile() has no flag for it.
  io_uring_prep_multishot_accept(s, fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  io_uring_sqe_set_data64(s, pack(Op::Accept, uint64_t(fd)));
}

void UringReactor::start_recv(uint64_t conn_id, int fd) {
  recv_fds_[conn_id] = Receiving{fd};
  arm_recv(conn_id, fd);
}

void UringReactor::arm_recv(uint64_t conn_id, int fd) {
  io_uring_sqe* s = sqe();
  io_uring_prep_recv_multishot(s, fd, nullptr, 0, 0);
  s->flags |= IOSQE_BUFFER_SELECT;
  s->buf_group = kBufferGroup;
  io_uring_sqe_set_data64(s, pack(Op::Recv, conn_id));
  recv_fds_[conn_id].armed = true;
}

// The armed multishot recv is cancelled; it ends with -ECANCELED (or with
// data, if it ended on its own first), and handle_recv leaves it unarmed.
void UringReactor::pause_recv(uint64_t conn_id) {
  auto it = recv_fds_.find(conn_id);
  if (it == recv_fds_.end() || it->second.paused) return;
  it->second.paused = true;
  if (!it->second.armed) return;
  io_uring_sqe* s = sqe();
  io_uring_prep_cancel64(s, pack(Op::Recv, conn_id), 0);
  io_uring_sqe_set_data64(s, pack(Op::Ignore, conn_id));
}

// Still armed: the cancel has not ended the recv yet, and handle_recv
// re-arms it when it does.
void UringReactor::resume_recv(uint64_t conn_id) {
  auto it = recv_fds_.find(conn_id);
  if (it == recv_fds_.end() || !it->second.paused) return;
  it->second.paused = false;
  if (!it->second.armed) arm_recv(conn_id, it->second.fd);
}

bool UringReactor::recv_stopped(uint64_t conn_id) const {
  auto it = recv_fds_.find(conn_id);
  return it != recv_fds_.end() && it->second.paused && !it->second.armed;
}

void UringReactor::start_send(uint64_t conn_id, int fd, struct msghdr* msg) {
  io_uring_sqe* s = sqe();
  io_uring_prep_sendmsg(s, fd, msg, MSG_NOSIGNAL);
  io_uring_sqe_set_data64(s, pack(Op::Send, conn_id));
}

bool UringReactor::queue_send(uint64_t conn_id, int fd, const uint8_t* data, size_t size) {
  if (!queued_sends_ || size == 0 || size > size_t(INT32_MAX)) return false;
  io_uring_sqe* s = sqe();
  prep_queued_send(s, fd, data, size);
  io_uring_sqe_set_data64(s, pack(Op::QueuedSend, sends_.add(conn_id, size, ring_.sq.sqe_tail - 1)));
  return true;
}

// After a submit: the queued sends whose SQEs the kernel took are over.
void UringReactor::note_submitted() { sends_.note_submitted(io_uring_smp_load_acquire(ring_.sq.khead)); }

// The sends that io_uring_enters took are reported before any other
// completion is handled, as an inline send() would have been: whatever a
// connection does next (a large WRITE moving to the bulk worker, a session
// binding) finds its reply gone, not waiting. The CQEs of those that
// failed are all in the completion queue by now, unless some wait in the
// kernel's overflow list behind a full queue: then the report waits until
// the queue has been emptied.
void UringReactor::report_taken_sends() {
  if (!sends_.any_taken()) return;
  if (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_CQ_OVERFLOW) {
    io_uring_get_events(&ring_);
    if (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_CQ_OVERFLOW) return;
  }
  send_failures_.clear();
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    if (op_of(ud) == Op::QueuedSend) send_failures_.push_back({id_of(ud), cqe->res});
  }
  for (const QueuedSends::Report& r : sends_.take_reports(send_failures_)) handler_.on_send(r.conn_id, r.result);
}

// A queued send's CQE: it sent less than asked, or nothing. Reported
// already, unless its SQE was taken after report_taken_sends (a submit of
// a full submission queue).
void UringReactor::handle_queued_send_failure(uint64_t tag, int result) {
  QueuedSends::Report r;
  if (sends_.take_failure(tag, result, r)) handler_.on_send(r.conn_id, r.result);
}

// Before a wait: must the queued sends it would submit be reported before
// it sleeps (their handler has more to do once they are out)?
bool UringReactor::sends_need_report_now() {
  return sends_.any_queued([&](uint64_t conn_id) { return handler_.wants_send_report(conn_id); });
}

void UringReactor::wait_writable(uint64_t conn_id, int fd) {
  io_uring_sqe* s = sqe();
  io_uring_prep_poll_add(s, fd, POLLOUT);
  io_uring_sqe_set_data64(s, pack(Op::Writable, conn_id));
}

// Called after the caller queued its task (under its lock): if a wake-up
// is already pending, the worker takes the task with the others, since
// handle_wake clears the flag before it takes them.
void UringReactor::wake() {
  if (wake_pending_.exchange(true, std::memory_order_seq_cst)) return;
  wake_fd_.signal();  // cannot fail: the counter is drained long before it could overflow
}

// A one-shot POLLIN poll, armed again after the handler has read the
// descriptor empty: simpler than a multishot poll, and these descriptors
// (inotify) are rare and quiet.
bool UringReactor::watch_readable(int fd, uint64_t token) {
  readable_fds_[token] = fd;
  arm_readable(token);
  return true;
}

void UringReactor::arm_readable(uint64_t token) {
  io_uring_sqe* s = sqe();
  io_uring_prep_poll_add(s, readable_fds_[token], POLLIN);
  io_uring_sqe_set_data64(s, pack(Op::Readable, token));
}

void UringReactor::handle_recv(uint64_t conn_id, const io_uring_cqe* cqe) {
  bool more = cqe->flags & IORING_CQE_F_MORE;
  if (cqe->res > 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
    uint16_t bid = uint16_t(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
    handler_.on_recv(conn_id, ByteSpan(buffers_ + size_t(bid) * opts_.recv_buffer_size, size_t(cqe->res)));
    recycle_buffer(bid);
    recv_in_place(conn_id);
  }
  if (more) return;
  auto it = recv_fds_.find(conn_id);
  if (it == recv_fds_.end()) return;
  it->second.armed = false;
  if (cqe->res == -ENOBUFS || cqe->res == -ECANCELED || cqe->res > 0) {
    // The kernel ended the multishot early (out of buffers) or pause_recv
    // cancelled it: re-arm it unless the handler still wants a pause.
    if (!it->second.paused) arm_recv(conn_id, it->second.fd);
    else handler_.on_recv_stopped(conn_id);
    return;
  }
  recv_fds_.erase(it);
  handler_.on_recv_end(conn_id, cqe->res);
}

// Receiving in place (ReactorHandler::recv_space), with DEFER_TASKRUN only:
// plain recv() calls between two io_uring_enters, after a recv completion.
//
// A recv() of our own keeps the byte order only when no bytes the ring took
// earlier are still waiting: not in this batch's remaining CQEs, not in CQEs
// beyond the batch or posted by a submit during it, not in the kernel's
// overflow list. The ring takes more only inside io_uring_enter
// (DEFER_TASKRUN).
bool UringReactor::may_recv_in_place(uint64_t conn_id) const {
  if (!defer_taskrun_ || entered_in_batch_) return false;
  if (io_uring_cq_ready(&ring_) > batch_count_) return false;
  if (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_CQ_OVERFLOW) return false;
  size_t later = batch_count_ - batch_pos_ - 1;
  if (later > kMaxLookahead) return false;  // busy: the copy is cheaper than the search
  for (size_t i = batch_pos_ + 1; i < batch_count_; ++i) {
    uint64_t ud = io_uring_cqe_get_data64(batch_[i]);
    if (op_of(ud) == Op::Recv && id_of(ud) == conn_id) return false;
  }
  return true;
}

// Receives what the handler wants in place until the socket is empty (the
// multishot recv, still armed, takes over again), the handler wants no
// more, or a budget is spent (other connections wait meanwhile). End of
// stream and errors are left to the multishot recv, which reports them
// through on_recv_end.
void UringReactor::recv_in_place(uint64_t conn_id) {
  auto it = recv_fds_.find(conn_id);
  if (it == recv_fds_.end() || it->second.paused) return;
  int fd = it->second.fd;
  size_t received = 0;
  while (received < kInPlaceBudget && may_recv_in_place(conn_id)) {
    std::span<uint8_t> space = handler_.recv_space(conn_id);
    if (space.empty()) return;
    ssize_t n = ::recv(fd, space.data(), space.size(), MSG_DONTWAIT);
    if (n <= 0) return;
    received += size_t(n);
    handler_.on_recv_in_place(conn_id, size_t(n));
  }
}

// An accept that failed (out of descriptors, most likely) is tried again
// only after a rest: re-armed at once, it fails at once again, and the
// worker spins (issue 11: 9 s of CPU in 21 s).
void UringReactor::handle_accept(int listen_fd, const io_uring_cqe* cqe) {
  int err = cqe->res < 0 ? -cqe->res : 0;
  if (cqe->res >= 0) handler_.on_accept(cqe->res);
  else if (err != EAGAIN && err != ECONNABORTED && err != EINTR) handler_.on_accept_failed(listen_fd, err);
  if (cqe->flags & IORING_CQE_F_MORE) return;
  if (err == 0 || err == EAGAIN || err == ECONNABORTED || err == EINTR) return add_listener(listen_fd);
  io_uring_sqe* s = sqe();
  io_uring_prep_timeout(s, &accept_retry_ts_, 0, 0);
  io_uring_sqe_set_data64(s, pack(Op::AcceptRetry, uint64_t(listen_fd)));
}

void UringReactor::handle(const io_uring_cqe* cqe) {
  uint64_t ud = io_uring_cqe_get_data64(cqe);
  switch (op_of(ud)) {
    case Op::Accept: handle_accept(int(id_of(ud)), cqe); break;
    case Op::AcceptRetry: add_listener(int(id_of(ud))); break;
    case Op::Recv: handle_recv(id_of(ud), cqe); break;
    case Op::Send: handler_.on_send(id_of(ud), cqe->res); break;
    case Op::QueuedSend: handle_queued_send_failure(id_of(ud), cqe->res); break;
    case Op::Writable: handler_.on_writable(id_of(ud), cqe->res); break;
    case Op::Wake: handle_wake(cqe); break;
    case Op::Tick:
      tick_armed_ = false;
      handler_.on_tick();
      if (handler_.wants_tick()) arm_tick();
      break;
    case Op::Readable:
      if (cqe->res < 0) {  // not re-armed: a failing poll would fail again at once
        LOG_ERROR("poll of watched descriptor: %s", strerror(-cqe->res));
        break;
      }
      handler_.on_readable(id_of(ud));
      arm_readable(id_of(ud));
      break;
    case Op::Ignore: break;  // a cancelled receive's cancel (pause_recv)
  }
}

// What completed, then, after a look_again(), what has completed since
// (io_uring_get_events runs the deferred completions: the receives of
// data that arrived meanwhile), until nobody asks again; a few times at
// most, so that a flood of directory changes cannot keep the loop from
// its tick; then the handler's deadlines that are due.
void UringReactor::handle_batch() {
  handle_cqes();
  if (look_again_) {
    for (int looks = 0; looks < kMaxLooksAgain && std::exchange(look_again_, false); ++looks) {
      io_uring_submit_and_get_events(&ring_);
      note_submitted();
      handle_cqes();
    }
    look_again_ = false;
    handler_.on_looked_again();
  }
  handler_.on_due();
}

// Until a completion, or the handler's next deadline (ms_until_due): a
// timeout of the wait itself (IORING_FEAT_EXT_ARG, no SQE), only while the
// handler has one, since it arms a timer in the kernel for the wait.
int UringReactor::wait() {
  int due = handler_.ms_until_due();
  if (due < 0) return io_uring_submit_and_wait(&ring_, 1);
  if (due == 0) return io_uring_submit_and_get_events(&ring_);
  __kernel_timespec ts{due / 1000, (due % 1000) * 1000000LL};
  io_uring_cqe* cqe = nullptr;
  int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
  return rc == -ETIME ? 0 : rc;
}

// Until the completion queue is empty and every taken send reported
// (the peek also moves the kernel's overflow list in).
void UringReactor::handle_cqes() {
  for (;;) {
    report_taken_sends();
    batch_count_ = io_uring_peek_batch_cqe(&ring_, batch_.data(), kBatchSize);
    if (batch_count_ == 0) {
      if (!sends_.any_taken()) return;
      continue;
    }
    entered_in_batch_ = false;
    for (batch_pos_ = 0; batch_pos_ < batch_count_; ++batch_pos_) handle(batch_[batch_pos_]);
    io_uring_cq_advance(&ring_, unsigned(batch_count_));
    batch_count_ = 0;
  }
}

void UringReactor::run(const std::atomic<bool>& stop) {
  if (disabled_) {
    // liburing 2.3 declares io_uring_enable_rings but does not export it.
    long rc = syscall(__NR_io_uring_register, ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0);
    if (rc < 0) LOG_ERROR("io_uring enable rings: %s", strerror(errno));
    disabled_ = false;
  }
  while (!stop.load(std::memory_order_relaxed)) {
    // Work was just handled (or this is the start): look for more before
    // sleeping, if configured. A look submits what is queued and runs the
    // deferred completions; nobody has to wake a thread that is not asleep.
    bool found = busy_poll_.poll([&] {
      int rc = io_uring_submit_and_get_events(&ring_);
      note_submitted();
      return (rc >= 0 || rc == -EINTR || rc == -EBUSY) && (io_uring_cq_ready(&ring_) > 0 || sends_.any_taken());
    });
    if (!found && sends_need_report_now()) {
      // A submit of its own, and the wait after the report: what the sends'
      // connections do next (send more, read again) must not wait for
      // some other completion to wake the worker.
      io_uring_submit(&ring_);
      note_submitted();
      handle_batch();
      continue;
    }
    if (!found) {
      int rc = wait();
      note_submitted();
      if (rc < 0 && rc != -EINTR && rc != -EBUSY) {
        LOG_ERROR("io_uring_submit_and_wait: %s; worker stops", strerror(-rc));
        return;
      }
    }
    busy_poll_.work_found();
    handle_batch();
    if (!tick_armed_ && handler_.wants_tick()) arm_tick();
  }
}

}  // namespace

std::unique_ptr<Reactor> make_uring_reactor(ReactorHandler& handler, const ReactorOptions& opts, std::string& why) {
  auto r = std::make_unique<UringReactor>(handler, opts);
  if (!r->init(why)) return nullptr;
  return r;
}

}  // namespace ringsmb::io
