#include "transport/metrics_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "common/log.hpp"
#include "transport/admin_endpoint.hpp"

namespace ringsmb::transport {
namespace {

constexpr int kPollMs = 200;           // how soon stop() is noticed
constexpr int kClientTimeoutS = 2;     // per read and write of one scrape
constexpr size_t kMaxRequest = 8192;   // a scrape's request is a few hundred bytes

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
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

// Reads until the end of the request's headers, a full buffer, EOF or the
// socket's timeout.
std::string read_request(int fd) {
  std::string req;
  char buf[1024];
  while (req.size() < kMaxRequest && req.find("\r\n\r\n") == std::string::npos &&
         req.find("\n\n") == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    req.append(buf, size_t(n));
  }
  return req;
}

void write_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    ssize_t n = send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += size_t(n);
  }
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
  fd_ = bind_listener(host, port, error);
  return fd_ >= 0;
}

void MetricsHttp::start(std::vector<Worker*> workers) {
  workers_ = std::move(workers);
  thread_ = std::thread([this] { run(); });
}

void MetricsHttp::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void MetricsHttp::run() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, kPollMs) <= 0) continue;
    int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    serve(c);
    close(c);
  }
}

void MetricsHttp::serve(int fd) {
  timeval tv{kClientTimeoutS, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::string request = read_request(fd);
  write_all(fd, respond(request, [this] { return AdminEndpoint::prometheus_text(workers_); }));
}

}  // namespace ringsmb::transport
