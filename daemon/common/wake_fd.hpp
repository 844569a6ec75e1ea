// A descriptor another thread makes readable: a thread that sleeps in
// poll(), epoll or io_uring on its sockets watches this one too, so stop()
// or new work ends its sleep at once instead of a timeout that wakes it
// for nothing.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace ringsmb {

class WakeFd {
 public:
  WakeFd() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~WakeFd() {
    if (fd_ >= 0) close(fd_);
  }
  WakeFd(const WakeFd&) = delete;
  WakeFd& operator=(const WakeFd&) = delete;

  // -1 when eventfd failed (no descriptors): poll() skips it, and the
  // owner then has to poll with a timeout (valid() says which).
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Thread-safe and async-signal-safe.
  void signal() const {
    uint64_t one = 1;
    if (fd_ >= 0 && write(fd_, &one, sizeof one) < 0) return;  // EAGAIN: it is readable already
  }
  // Makes it unreadable again (after the poll that saw it).
  void clear() const {
    uint64_t n = 0;
    if (fd_ >= 0 && read(fd_, &n, sizeof n) < 0) return;  // EAGAIN: it was not readable
  }

 private:
  int fd_;
};

}  // namespace ringsmb
