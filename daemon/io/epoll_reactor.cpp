// epoll backend: the same Reactor interface with plain non-blocking
// syscalls, for kernels or sandboxes where io_uring is unavailable
// (io_uring_disabled sysctl, seccomp). The rest of a large frame is
// received straight into place (ReactorHandler::recv_space).
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "common/wake_fd.hpp"
#include "io/reactor.hpp"

namespace ringsmb::io {
namespace {

enum class Kind : uint8_t { Listener = 1, Conn = 2, Wake = 3, Readable = 4 };
constexpr uint64_t kIdMask = (uint64_t(1) << 56) - 1;
uint64_t pack(Kind k, uint64_t id) { return (uint64_t(k) << 56) | (id & kIdMask); }

class EpollReactor final : public Reactor {
 public:
  EpollReactor(ReactorHandler& h, const ReactorOptions& o) : handler_(h), opts_(o), buf_(o.recv_buffer_size * 4) {}
  ~EpollReactor() override {
    if (ep_ >= 0) close(ep_);
  }
  bool init();
  const char* name() const override { return "epoll"; }
  bool receives_in_place() const override { return true; }
  void add_listener(int fd) override;
  void start_recv(uint64_t conn_id, int fd) override;
  void start_send(uint64_t conn_id, int fd, struct msghdr* msg) override;
  void wait_writable(uint64_t conn_id, int fd) override;
  void pause_recv(uint64_t conn_id) override;
  void resume_recv(uint64_t conn_id) override;
  void release(uint64_t conn_id) override;
  bool adopt(uint64_t conn_id, int fd) override;
  bool recv_stopped(uint64_t conn_id) const override {
    auto it = conns_.find(conn_id);
    return it != conns_.end() && it->second.paused;  // pause_recv took EPOLLIN away
  }
  void wake() override;
  bool watch_readable(int fd, uint64_t token) override;
  void look_again() override { look_again_ = true; }
  void run(const std::atomic<bool>& stop) override;

 private:
  void handle_events(epoll_event* events, int n);
  struct Conn {
    int fd = -1;
    // Waiting for EPOLLOUT: a send to finish, or a wait for room.
    struct msghdr* pending_send = nullptr;
    bool wants_writable = false;
    bool paused = false;  // pause_recv: no EPOLLIN interest
  };
  // A listener taken out of the epoll set after a failed accept, until `at`.
  struct RestingListener {
    int fd;
    std::chrono::steady_clock::time_point at;
  };
  // A send or a wait for room that ended, reported after the event that
  // ended it, so a handler never re-enters itself from start_send.
  struct Completion {
    uint64_t conn_id;
    int result;
    bool writable;  // wait_writable's, else start_send's
  };
  void accept_all(int listen_fd);
  void wake_rested_listeners();
  int wait_timeout_ms();
  void read_all(uint64_t conn_id);
  void try_send(uint64_t conn_id, Conn& c);
  void report_writable(uint64_t conn_id, Conn& c);
  void update_interest(uint64_t conn_id, const Conn& c);
  void flush_completions();

  ReactorHandler& handler_;
  ReactorOptions opts_;
  bool look_again_ = false;  // look_again(): one more wait of none before the next sleep
  bool ticking_ = true;      // off while the handler wants no tick
  BusyPoll busy_poll_{opts_.busy_poll_us};
  int ep_ = -1;
  WakeFd wake_fd_;
  std::vector<uint8_t> buf_;
  std::unordered_map<uint64_t, Conn> conns_;
  std::deque<Completion> done_;
  std::vector<RestingListener> resting_;
};

bool EpollReactor::init() {
  ep_ = epoll_create1(EPOLL_CLOEXEC);
  if (ep_ < 0 || !wake_fd_.valid()) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = pack(Kind::Wake, 0);
  return epoll_ctl(ep_, EPOLL_CTL_ADD, wake_fd_.fd(), &ev) == 0;
}

// Level-triggered: the handler reads until EAGAIN anyway.
bool EpollReactor::watch_readable(int fd, uint64_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = pack(Kind::Readable, token);
  return epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void EpollReactor::add_listener(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = pack(Kind::Listener, uint64_t(fd));
  if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) LOG_ERROR("epoll_ctl(listener): %s", strerror(errno));
}

void EpollReactor::start_recv(uint64_t conn_id, int fd) {
  conns_[conn_id] = Conn{fd};
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = pack(Kind::Conn, conn_id);
  if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    LOG_ERROR("epoll_ctl(conn): %s", strerror(errno));
    conns_.erase(conn_id);
    handler_.on_recv_end(conn_id, -errno);
  }
}

void EpollReactor::release(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return;
  epoll_ctl(ep_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  conns_.erase(it);
}

// Registered with no interest: resume_recv adds EPOLLIN.
bool EpollReactor::adopt(uint64_t conn_id, int fd) {
  epoll_event ev{};
  ev.data.u64 = pack(Kind::Conn, conn_id);
  if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    LOG_ERROR("epoll_ctl(conn): %s", strerror(errno));
    return false;
  }
  Conn& c = conns_[conn_id] = Conn{fd};
  c.paused = true;
  return true;
}

void EpollReactor::update_interest(uint64_t conn_id, const Conn& c) {
  epoll_event ev{};
  ev.events = (c.paused ? 0u : uint32_t(EPOLLIN | EPOLLRDHUP)) |
              (c.pending_send || c.wants_writable ? uint32_t(EPOLLOUT) : 0u);
  ev.data.u64 = pack(Kind::Conn, conn_id);
  epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
}

void EpollReactor::try_send(uint64_t conn_id, Conn& c) {
  ssize_t n = sendmsg(c.fd, c.pending_send, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // wait for EPOLLOUT
  c.pending_send = nullptr;
  update_interest(conn_id, c);
  done_.push_back({conn_id, n < 0 ? -errno : int(n), false});
}

void EpollReactor::start_send(uint64_t conn_id, int fd, struct msghdr* msg) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) {
    // Receiving already ended; still report the send.
    ssize_t n = sendmsg(fd, msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    done_.push_back({conn_id, n < 0 ? -errno : int(n), false});
    return;
  }
  it->second.pending_send = msg;
  ssize_t n = sendmsg(fd, msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    update_interest(conn_id, it->second);
    return;
  }
  it->second.pending_send = nullptr;
  done_.push_back({conn_id, n < 0 ? -errno : int(n), false});
}

void EpollReactor::report_writable(uint64_t conn_id, Conn& c) {
  c.wants_writable = false;
  update_interest(conn_id, c);
  done_.push_back({conn_id, 0, true});
}

void EpollReactor::wait_writable(uint64_t conn_id, int) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) {  // receiving already ended: nothing to wait for
    done_.push_back({conn_id, -EPIPE, true});
    return;
  }
  it->second.wants_writable = true;
  update_interest(conn_id, it->second);
}

void EpollReactor::pause_recv(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end() || it->second.paused) return;
  it->second.paused = true;
  update_interest(conn_id, it->second);
}

void EpollReactor::resume_recv(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end() || !it->second.paused) return;
  it->second.paused = false;
  update_interest(conn_id, it->second);  // level-triggered: bytes queued meanwhile are reported at once
}

void EpollReactor::wake() { wake_fd_.signal(); }

// A failed accept (out of descriptors, most likely) takes the listener out
// of the set for kAcceptRetryMs: level-triggered, it would report the
// waiting client again at once, and the worker would spin.
void EpollReactor::accept_all(int listen_fd) {
  for (;;) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      handler_.on_accept(fd);
      continue;
    }
    int err = errno;
    if (err == ECONNABORTED || err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return;
    handler_.on_accept_failed(listen_fd, err);
    epoll_ctl(ep_, EPOLL_CTL_DEL, listen_fd, nullptr);
    resting_.push_back({listen_fd, std::chrono::steady_clock::now() + std::chrono::milliseconds(kAcceptRetryMs)});
    return;
  }
}

void EpollReactor::wake_rested_listeners() {
  auto now = std::chrono::steady_clock::now();
  std::vector<int> due;
  std::erase_if(resting_, [&](const RestingListener& r) {
    if (r.at > now) return false;
    due.push_back(r.fd);
    return true;
  });
  for (int fd : due) add_listener(fd);
}

// Until the tick (when one is wanted), a rested listener's retry or the
// handler's next deadline; -1 sleeps until an event.
int EpollReactor::wait_timeout_ms() {
  int t = ticking_ ? opts_.tick_ms : -1;
  if (!resting_.empty()) t = t < 0 ? kAcceptRetryMs : std::min(t, kAcceptRetryMs);
  int due = handler_.ms_until_due();
  if (due < 0) return t;
  return t < 0 ? due : std::min(t, due);
}

void EpollReactor::read_all(uint64_t conn_id) {
  for (int rounds = 0; rounds < 16; ++rounds) {  // bounded, so one client cannot starve others
    auto it = conns_.find(conn_id);
    if (it == conns_.end() || it->second.paused) return;
    // Every recv here takes the stream's next bytes, so reading into the
    // handler's space keeps the order.
    std::span<uint8_t> space = handler_.recv_space(conn_id);
    uint8_t* into = space.empty() ? buf_.data() : space.data();
    ssize_t n = recv(it->second.fd, into, space.empty() ? buf_.size() : space.size(), MSG_DONTWAIT);
    if (n > 0) {
      if (space.empty()) handler_.on_recv(conn_id, ByteSpan(buf_.data(), size_t(n)));
      else handler_.on_recv_in_place(conn_id, size_t(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    int err = n == 0 ? 0 : -errno;
    epoll_ctl(ep_, EPOLL_CTL_DEL, it->second.fd, nullptr);
    // A send or a wait for room ends with the connection (its EPOLLOUT is gone).
    if (it->second.pending_send) done_.push_back({conn_id, -EPIPE, false});
    if (it->second.wants_writable) done_.push_back({conn_id, -EPIPE, true});
    conns_.erase(it);
    handler_.on_recv_end(conn_id, err);
    return;
  }
}

void EpollReactor::flush_completions() {
  while (!done_.empty()) {
    Completion c = done_.front();
    done_.pop_front();
    if (c.writable) handler_.on_writable(c.conn_id, c.result);
    else handler_.on_send(c.conn_id, c.result);
  }
}

// One wait's events, each handled as it comes.
void EpollReactor::handle_events(epoll_event* events, int n) {
  for (int i = 0; i < n; ++i) {
    uint64_t ud = events[i].data.u64;
    uint64_t id = ud & kIdMask;
    switch (Kind(ud >> 56)) {
      case Kind::Listener: accept_all(int(id)); break;
      case Kind::Readable: handler_.on_readable(id); break;
      case Kind::Wake:
        wake_fd_.clear();
        handler_.on_wake();
        break;
      case Kind::Conn: {
        auto it = conns_.find(id);
        // EPOLLERR/EPOLLHUP end a wait too: the next send reports the error.
        bool room = events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP);
        if (it != conns_.end() && room && it->second.pending_send) try_send(id, it->second);
        if (it != conns_.end() && room && it->second.wants_writable) report_writable(id, it->second);
        if (it != conns_.end() && it->second.paused && (events[i].events & (EPOLLHUP | EPOLLERR))) {
          // Reported whatever the interest: resumed, the next recv sees the end.
          it->second.paused = false;
          update_interest(id, it->second);
        }
        if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) read_all(id);
        break;
      }
    }
    flush_completions();
  }
}

void EpollReactor::run(const std::atomic<bool>& stop) {
  epoll_event events[64];
  auto last_tick = std::chrono::steady_clock::now();
  int last_n = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    flush_completions();
    int n = 0;
    // After work, look for more before sleeping, while that pays.
    if (last_n <= 0 || !busy_poll_.poll([&] { return (n = epoll_wait(ep_, events, 64, 0)) > 0; }))
      n = epoll_wait(ep_, events, 64, wait_timeout_ms());
    if (last_n > 0) busy_poll_.work_found();  // a timeout (n == 0) is a long gap
    last_n = n;
    handle_events(events, n);
    // look_again(): what is ready now, without waiting, before the caller's rest.
    if (look_again_) {
      for (int looks = 0; looks < kMaxLooksAgain && std::exchange(look_again_, false); ++looks)
        handle_events(events, epoll_wait(ep_, events, 64, 0));
      look_again_ = false;
      handler_.on_looked_again();
    }
    handler_.on_due();
    if (!resting_.empty()) wake_rested_listeners();
    auto now = std::chrono::steady_clock::now();
    if (ticking_ && now - last_tick >= std::chrono::milliseconds(opts_.tick_ms)) {
      last_tick = now;
      handler_.on_tick();
      ticking_ = handler_.wants_tick();
    } else if (!ticking_ && handler_.wants_tick()) {
      ticking_ = true;
      last_tick = now;
    }
  }
}

}  // namespace

std::unique_ptr<Reactor> make_epoll_reactor(ReactorHandler& handler, const ReactorOptions& opts) {
  auto r = std::make_unique<EpollReactor>(handler, opts);
  if (!r->init()) return nullptr;
  return r;
}

}  // namespace ringsmb::io
