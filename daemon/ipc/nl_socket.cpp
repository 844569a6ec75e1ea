#include "ipc/nl_socket.hpp"

#include <linux/netlink.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "ipc/ctl_abi.hpp"

namespace ringsmb::ipc {
namespace {

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// A flood of forged datagrams must not flood the log: at most 20 lines a
// minute, then one line saying how many were not logged.
void log_dropped(const char* why, uint32_t port, const ucred* c) {
  static std::atomic<int64_t> window_start{0};
  static std::atomic<int> in_window{0}, suppressed{0};
  int64_t now = now_ms();
  if (now - window_start.load() > 60000) {
    window_start = now;
    int s = suppressed.exchange(0);
    in_window = 0;
    if (s) LOG_WARN("ctl: %d more rejected netlink messages were not logged", s);
  }
  if (in_window.fetch_add(1) >= 20) {
    suppressed.fetch_add(1);
    return;
  }
  if (c) {
    LOG_WARN("ctl: dropped netlink message from port %u (pid %d uid %u gid %u): %s", port, int(c->pid),
             unsigned(c->uid), unsigned(c->gid), why);
  } else {
    LOG_WARN("ctl: dropped netlink message from port %u: %s", port, why);
  }
}

const ucred* find_creds(msghdr& mh) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(ucred)))
      return reinterpret_cast<const ucred*>(CMSG_DATA(c));
  }
  return nullptr;
}

}  // namespace

bool credentials_allowed(uint32_t uid, uint32_t own_euid) { return uid == 0 || uid == own_euid; }

bool write_port_file(const std::string& path, uint32_t port, std::string& error) {
  std::string tmp = path + ".tmp";
  unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = "cannot write " + tmp + ": " + strerror(errno);
    return false;
  }
  std::string text = std::to_string(port) + "\n";
  bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path + ": " + strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

uint32_t read_port_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  struct stat st{};
  char text[16] = {};
  bool trusted = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == geteuid()) &&
                 (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  ssize_t n = trusted ? read(fd, text, sizeof text - 1) : -1;
  close(fd);
  if (!trusted) {
    LOG_WARN("ctl: ignoring %s: not owned by root or uid %u, or writable by others", path.c_str(), unsigned(geteuid()));
    return 0;
  }
  if (n <= 0) return 0;
  char* end = nullptr;
  unsigned long port = strtoul(text, &end, 10);
  return (end != text && port <= UINT32_MAX) ? uint32_t(port) : 0;
}

std::expected<NlSocket, std::string> NlSocket::configure(NlSocket s) {
  int one = 1;
  if (setsockopt(s.fd_, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0)
    return std::unexpected(std::string("SO_PASSCRED: ") + strerror(errno));
  int rcvbuf = 1 << 20;  // bursts of logins from many workers must not overflow
  setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  // A full peer queue makes send() wait this long for room instead of
  // failing at once: a reply is not lost to a burst.
  timeval wait{abi::kSendWaitMs / 1000, (abi::kSendWaitMs % 1000) * 1000};
  setsockopt(s.fd_, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
  sockaddr_nl addr{};
  socklen_t len = sizeof addr;
  getsockname(s.fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s.port_ = addr.nl_pid;
  // Aligned (vector storage comes from operator new) and one byte larger
  // than the largest valid message, so MSG_TRUNC reveals oversized ones.
  s.buf_.resize(abi::kMaxMessage + 1);
  return s;
}

std::expected<NlSocket, std::string> NlSocket::open(uint32_t port) {
  NlSocket s;
  s.fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, abi::kNetlinkProtocol);
  if (s.fd_ < 0) return std::unexpected(std::string("netlink socket: ") + strerror(errno));
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_pid = port;
  if (bind(s.fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return std::unexpected("netlink bind to port " + std::to_string(port) + ": " + strerror(errno));
  return configure(std::move(s));
}

std::expected<NlSocket, std::string> NlSocket::adopt(int fd) {
  int domain = 0, protocol = 0, type = 0;
  socklen_t len = sizeof domain;
  bool ok = getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_NETLINK;
  len = sizeof protocol;
  ok = ok && getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0 && protocol == abi::kNetlinkProtocol;
  len = sizeof type;
  ok = ok && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_RAW;
  if (!ok) return std::unexpected("descriptor " + std::to_string(fd) + " is not a NETLINK_USERSOCK socket");
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  NlSocket s;
  s.fd_ = fd;
  auto r = configure(std::move(s));
  if (r && r->port_ == 0) return std::unexpected("descriptor " + std::to_string(fd) + " is not bound");
  return r;
}

int NlSocket::connect_to(uint32_t port) {
  sockaddr_nl addr{};
  addr.nl_family = port ? AF_NETLINK : AF_UNSPEC;
  addr.nl_pid = port;
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return errno;
  peer_ = port;
  return 0;
}

NlSocket::NlSocket(NlSocket&& o) noexcept : fd_(o.fd_), port_(o.port_), peer_(o.peer_), buf_(std::move(o.buf_)) {
  o.fd_ = -1;
}

NlSocket& NlSocket::operator=(NlSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    port_ = o.port_;
    peer_ = o.peer_;
    buf_ = std::move(o.buf_);
    o.fd_ = -1;
  }
  return *this;
}

NlSocket::~NlSocket() {
  if (fd_ >= 0) close(fd_);
}

int NlSocket::send(uint32_t dst, ByteSpan msg) {
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_pid = dst;
  ssize_t n;
  do {  // blocks up to SO_SNDTIMEO while DST's queue is full
    n = sendto(fd_, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (n < 0 && errno == EINTR);
  return n == ssize_t(msg.size()) ? 0 : (n < 0 ? errno : EMSGSIZE);
}

NlSocket::Got NlSocket::receive_one(Datagram& out) {
  sockaddr_nl from{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  iovec iov{buf_.data(), buf_.size()};
  msghdr mh{};
  mh.msg_name = &from;
  mh.msg_namelen = sizeof from;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n = recvmsg(fd_, &mh, MSG_DONTWAIT | MSG_TRUNC);
  if (n < 0) {
    if (errno == ENOBUFS) {  // the kernel dropped datagrams for us; the socket still works
      LOG_WARN("ctl: netlink receive buffer overrun, messages lost");
      return Got::Dropped;
    }
    return Got::Nothing;
  }
  const ucred* c = find_creds(mh);
  if (!c) {
    log_dropped("no credentials", from.nl_pid, nullptr);
    return Got::Dropped;
  }
  if (!credentials_allowed(c->uid, geteuid())) {
    log_dropped("sender uid is neither 0 nor ours", from.nl_pid, c);
    return Got::Dropped;
  }
  if (size_t(n) > abi::kMaxMessage || (mh.msg_flags & MSG_TRUNC)) {
    log_dropped("message too large", from.nl_pid, c);
    return Got::Dropped;
  }
  out.port = from.nl_pid;
  out.cred = *c;
  out.size = size_t(n);
  return Got::Message;
}

bool NlSocket::receive(Datagram& out, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    Got g = receive_one(out);
    if (g == Got::Message) return true;
    if (g == Got::Dropped) continue;
    int wait = -1;
    if (deadline >= 0) {
      wait = int(deadline - now_ms());
      if (wait <= 0) return false;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, wait);
    if (r < 0 && errno != EINTR) return false;
    if (r == 0) return false;
  }
}

}  // namespace ringsmb::ipc
