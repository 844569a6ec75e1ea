#include "transport/metrics_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "transport/admin_endpoint.hpp"

namespace ringsmb::transport {
namespace {

constexpr int64_t kRequestDeadlineMs = 2000;  // from accept to the end of the request's headers
constexpr int64_t kAnswerDeadlineMs = 5000;   // from accept to the last byte of the answer
constexpr size_t kMaxRequest = 8192;          // a scrape's request is a few hundred bytes
constexpr size_t kMaxClients = 8;             // exchanges at once; the oldest goes for a new one

int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool request_complete(const std::string& req) {
  return req.size() >= kMaxRequest || req.find("\r\n\r\n") != std::string::npos ||
         req.find("\n\n") != std::string::npos;
}

int bind_listener(const std::string& host, uint16_t port, std::string& error) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    error = "metrics listen: not a numeric address: " + host;
    return -1;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);  // accept_clients() takes all waiting
  if (fd < 0) {
    error = std::string("metrics listen: socket: ") + strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 16) != 0) {
    error = "metrics listen on " + host + ":" + std::to_string(port) + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool parse_request_line(const std::string& request, std::string& method, std::string& target) {
  size_t eol = request.find('\n');
  if (eol == std::string::npos) return false;
  std::string line = request.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  size_t sp1 = line.find(' ');
  if (sp1 == std::string::npos) return false;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) return false;
  method = line.substr(0, sp1);
  target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  return !method.empty() && !target.empty();
}

std::string http_response(int code, const char* reason, const std::string& content_type, const std::string& body,
                          bool head) {
  std::string r = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + content_type +
                  "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head) r += body;
  return r;
}

MetricsHttp::~MetricsHttp() {
  stop();
  if (fd_ >= 0) close(fd_);
}

bool MetricsHttp::open(const std::string& host, uint16_t port, std::string& error) {
  if (!wake_.valid()) {
    error = std::string("metrics listen: eventfd: ") + strerror(errno);
    return false;
  }
  fd_ = bind_listener(host, port, error);
  return fd_ >= 0;
}

void MetricsHttp::start(std::vector<Worker*> workers) {
  workers_ = std::move(workers);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ringsmbd-metric");
    run();
  });
}

void MetricsHttp::stop() {
  stop_ = true;
  wake_.signal();
  if (thread_.joinable()) thread_.join();
}

// Until the nearest client's deadline; with no client, until a peer
// connects or stop() (an idle listener wakes for nothing else).
int MetricsHttp::sleep_ms() const {
  if (clients_.empty()) return -1;
  int64_t first = clients_.front().deadline_ms;
  for (const Client& c : clients_) first = std::min(first, c.deadline_ms);
  return int(std::clamp<int64_t>(first - now_ms(), 0, kAnswerDeadlineMs));
}

void MetricsHttp::run() {
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.assign({pollfd{fd_, POLLIN, 0}, pollfd{wake_.fd(), POLLIN, 0}});
    for (const Client& c : clients_) fds.push_back({c.fd, short(c.out.empty() ? POLLIN : POLLOUT), 0});
    if (poll(fds.data(), fds.size(), sleep_ms()) < 0) continue;
    if (fds[1].revents) wake_.clear();
    const int64_t now = now_ms();
    // Serve the clients first: a new one may take the place of the oldest.
    for (size_t i = clients_.size(); i-- > 0;) {
      Client& c = clients_[i];
      bool ready = fds[i + 2].revents != 0;
      if ((ready && serve(c)) || (!ready && now < c.deadline_ms)) continue;
      close(c.fd);
      clients_.erase(clients_.begin() + ptrdiff_t(i));
    }
    if (fds[0].revents & POLLIN) accept_clients();
  }
  for (Client& c : clients_) close(c.fd);
  clients_.clear();
}

void MetricsHttp::accept_clients() {
  for (;;) {
    int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;
    if (clients_.size() >= kMaxClients) {  // the oldest is the one most likely stuck
      close(clients_.front().fd);
      clients_.erase(clients_.begin());
    }
    clients_.push_back({c, {}, {}, 0, now_ms() + kRequestDeadlineMs});
  }
}

bool MetricsHttp::serve(Client& c) {
  const int64_t now = now_ms();
  if (now >= c.deadline_ms) return false;
  if (c.out.empty()) {
    char buf[1024];
    ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    if (n > 0) c.in.append(buf, size_t(n));
    if (n > 0 && !request_complete(c.in)) return true;
    // Complete, or the peer finished sending: answer what came.
    c.out = respond(c.in, [this] { return AdminEndpoint::prometheus_text(workers_); });
    c.deadline_ms += kAnswerDeadlineMs - kRequestDeadlineMs;
  }
  ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  c.sent += size_t(n);
  return c.sent < c.out.size();
}

}  // namespace ringsmb::transport
