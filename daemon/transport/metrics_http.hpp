// The optional /metrics listener ("metrics listen", docs/monitoring.md): a
// minimal HTTP/1.x server on its own thread that answers GET /metrics with
// what `ringsmbctl status --prometheus` prints, for a Prometheus server to
// scrape. In ringsmbd, not ringsmb-ctld: the counters live in ringsmbd's
// workers, and ctld (which holds every password hash) keeps no socket a
// network peer can reach. One request per connection, each bounded in
// size and in time as a whole (a peer that sends a byte a second is cut
// off at the deadline, however many it sends), up to kMaxClients at once
// on one poll loop, so a slow peer delays no other scrape; beyond that
// the oldest is dropped. It is a scrape target, not a web server.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/wake_fd.hpp"

namespace ringsmb::transport {

class Worker;

class MetricsHttp {
 public:
  MetricsHttp() = default;
  ~MetricsHttp();
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // Binds HOST:PORT (numeric) and listens.
  bool open(const std::string& host, uint16_t port, std::string& error);
  // Serves until stop(); WORKERS must outlive the thread.
  void start(std::vector<Worker*> workers);
  void stop();

  // The answer to one request (exposed for the unit tests): status line,
  // headers and body. BODY is produced only for GET /metrics.
  template <typename Body>
  static std::string respond(const std::string& request, Body&& body);

 private:
  // One peer's exchange: its request as read so far, then the answer as
  // sent so far, all before its deadline.
  struct Client {
    int fd = -1;
    std::string in;
    std::string out;  // the answer, once the request is complete
    size_t sent = 0;
    int64_t deadline_ms = 0;
  };
  void run();
  int sleep_ms() const;  // how long run() may wait in poll
  void accept_clients();
  // Reads or writes what C's socket allows; false when C is done.
  bool serve(Client& c);

  int fd_ = -1;
  std::vector<Client> clients_;
  std::vector<Worker*> workers_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  WakeFd wake_;  // stop() ends run()'s poll
};

// The request line's method and target; false when REQUEST has no complete
// request line.
bool parse_request_line(const std::string& request, std::string& method, std::string& target);
std::string http_response(int code, const char* reason, const std::string& content_type, const std::string& body,
                          bool head);

template <typename Body>
std::string MetricsHttp::respond(const std::string& request, Body&& body) {
  std::string method, target;
  if (!parse_request_line(request, method, target)) return http_response(400, "Bad Request", "text/plain", "bad request\n", false);
  bool head = method == "HEAD";
  if (method != "GET" && !head) return http_response(405, "Method Not Allowed", "text/plain", "GET only\n", false);
  if (target != "/metrics" && target.rfind("/metrics?", 0) != 0)
    return http_response(404, "Not Found", "text/plain", "only /metrics is served here\n", head);
  auto text = body();
  if (!text) return http_response(503, "Service Unavailable", "text/plain", text.error() + "\n", head);
  return http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", *text, head);
}

}  // namespace ringsmb::transport
