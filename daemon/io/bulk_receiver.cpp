#include "io/bulk_receiver.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/bytes.hpp"
#include "common/thread_priority.hpp"

namespace ringsmb::io {

// The eventfd's epoll tag: connection ids start at 1.
constexpr uint64_t kWakeTag = 0;

ThreadBulkReceiver::ThreadBulkReceiver(OnDone on_done) : on_done_(std::move(on_done)) {}

ThreadBulkReceiver::~ThreadBulkReceiver() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    uint64_t one = 1;
    ssize_t n = write(wake_fd_, &one, sizeof one);
    (void)n;
    thread_.join();
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool ThreadBulkReceiver::start(unsigned nice) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) return false;
  thread_ = std::thread([this, nice] { run(nice); });
  return true;
}

void ThreadBulkReceiver::submit(const Job& job) {
  {
    std::lock_guard lock(mu_);
    submitted_.push_back(job);
  }
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof one);
  (void)n;  // EAGAIN: a wake-up is pending anyway
}

void ThreadBulkReceiver::run(unsigned nice) {
  pthread_setname_np(pthread_self(), "ringsmbd-recv");
  lower_this_thread_priority(nice);
  epoll_event events[64];
  for (;;) {
    int n = epoll_wait(epoll_fd_, events, 64, -1);
    if (n < 0 && errno != EINTR) return;
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kWakeTag) {
        uint64_t count;
        ssize_t r = read(wake_fd_, &count, sizeof count);
        (void)r;
        {
          std::lock_guard lock(mu_);
          if (stopping_) return;
        }
        take_submitted();
        continue;
      }
      auto it = jobs_.find(tag);
      if (it == jobs_.end()) continue;
      Done done;
      if (fill(it->second, done)) finish(tag, done);
    }
  }
}

// A new job's socket may hold its bytes already: level-triggered epoll
// reports it at the next wait.
void ThreadBulkReceiver::take_submitted() {
  std::vector<Job> jobs;
  {
    std::lock_guard lock(mu_);
    jobs.swap(submitted_);
  }
  for (const Job& job : jobs) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = job.conn_id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, job.fd, &ev) != 0) {
      Done done;
      done.conn_id = job.conn_id;
      done.failed = true;
      on_done_(done);
      continue;
    }
    jobs_[job.conn_id] = job;
  }
}

// Up to kSliceBytes from this socket, then the next ready one: sockets
// filled together share the thread. After a full body, the next frame's
// header if it is there already.
bool ThreadBulkReceiver::fill(Job& job, Done& done) {
  done.conn_id = job.conn_id;
  size_t slice = 0;
  while (!job.body.empty() && slice < kSliceBytes) {
    size_t want = std::min(job.body.size(), kSliceBytes - slice);
    if (job.frame_min) want = std::min(want, kHeaderSize - job.received);  // nothing past the header yet
    ssize_t n = recv(job.fd, job.body.data(), want, MSG_DONTWAIT);
    if (n > 0) {
      job.body = job.body.subspan(size_t(n));
      job.received += size_t(n);
      slice += size_t(n);
      if (job.frame_min && job.received == kHeaderSize) shape_frame(job);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // epoll says when there is more
    done.received = job.received;
    done.failed = true;  // end of stream, or the socket failed (shut down by the worker)
    return true;
  }
  if (!job.body.empty()) return false;
  done.received = job.received;
  if (!job.then_header) return true;
  ssize_t h = recv(job.fd, done.header, kHeaderSize, MSG_DONTWAIT);
  done.header_len = h > 0 ? size_t(h) : 0;
  return true;
}

// The Direct TCP header (a zero byte, a 24-bit big-endian length) lies
// just before BODY. A frame the owner would not receive off its thread,
// or one that does not fit, is left in the socket (and no header after it
// is taken): the owner frames it.
void ThreadBulkReceiver::shape_frame(Job& job) {
  const uint8_t* h = job.body.data() - kHeaderSize;
  size_t len = load_be24(h + 1);
  bool whole = h[0] == 0 && len >= job.frame_min && len <= job.body.size();
  job.body = job.body.first(whole ? len : 0);
  job.then_header = whole && job.then_header;
  job.frame_min = 0;
}

void ThreadBulkReceiver::finish(uint64_t conn_id, Done& done) {
  auto it = jobs_.find(conn_id);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  jobs_.erase(it);
  on_done_(done);
}

}  // namespace ringsmb::io
