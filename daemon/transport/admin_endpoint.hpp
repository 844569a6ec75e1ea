// ringsmbd's admin socket: answers ringsmbctl's LIST_* (status), GET_METRICS,
// CLOSE_SESSION, CLOSE_FILE, CLOSE_SHARE, RELOAD and SHUTDOWN over netlink (ctl_abi.hpp), and pings
// the systemd watchdog while every worker keeps answering. ringsmbd holds
// the sessions and open files, so ringsmbctl asks it directly, whichever
// control plane runs. Only root or ringsmbd's own uid get an answer
// (nl_socket.hpp enforces it on every datagram).
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/wake_fd.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_status.hpp"
#include "ipc/nl_socket.hpp"
#include "smb2/engine/metrics.hpp"

namespace ringsmb::transport {

class Worker;

struct AdminActions {
  // Re-reads configuration and users; the error text when the file is bad,
  // else its warnings (one a line, may be empty).
  std::function<std::expected<std::string, std::string>()> reload;
  std::function<void()> shutdown;
};

class AdminEndpoint {
 public:
  AdminEndpoint() = default;
  ~AdminEndpoint();  // stops the thread and removes the pid file
  AdminEndpoint(const AdminEndpoint&) = delete;
  AdminEndpoint& operator=(const AdminEndpoint&) = delete;

  // Binds a port the kernel chooses and writes STATE_DIR/ringsmbd.port
  // (0600; ringsmbctl reads it) and STATE_DIR/ringsmbd.pid. Anyone may
  // send to this port: each datagram's credentials are checked, and
  // ringsmbctl's socket is connected to it, so our replies reach it even
  // while others flood us.
  bool open(const std::string& state_dir, std::string& error);
  // Serves until stop(). WORKERS must outlive the serving thread.
  void start(std::vector<Worker*> workers, AdminActions actions);
  void stop();

  // Runs collect_status on every worker and merges the parts; an error
  // when a worker does not answer within TIMEOUT_MS.
  static std::expected<ipc::ServerStatus, std::string> gather(const std::vector<Worker*>& workers, int timeout_ms);
  // Copies every worker's counters on its own thread and sums them.
  static std::expected<smb2::WorkerMetrics, std::string> gather_metrics(const std::vector<Worker*>& workers,
                                                                        int timeout_ms);
  // The gauges of the status lists and the counters, in the Prometheus
  // text format (the /metrics listener's answer).
  static std::expected<std::string, std::string> prometheus_text(const std::vector<Worker*>& workers);

 private:
  void run();
  std::vector<Bytes> handle(const ipc::Message& m, uint32_t from_port);
  std::expected<ipc::ServerStatus, std::string> snapshot_for(ipc::abi::Cmd cmd, uint32_t from_port);
  Bytes status_reply(const ipc::Message& m, NtStatus status, const std::string& text = {});
  // Runs ACT on each of WORKERS' threads and sums what each returns; an
  // error when a worker does not answer within kGatherTimeoutMs.
  std::expected<size_t, std::string> on_workers(const std::vector<Worker*>& workers,
                                                std::function<size_t(Worker&)> act);
  std::vector<Bytes> close_share(const ipc::Message& m);
  void watchdog_round();
  // How long run() may sleep: until the watchdog's next ping, else -1.
  int sleep_ms() const;

  ipc::NlSocket sock_;
  std::string pid_file_;
  std::string port_file_;
  std::vector<Worker*> workers_;
  AdminActions actions_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  WakeFd wake_;  // stop() ends run()'s poll
  // Watchdog: the previous round's probes must all have run on their
  // workers before the next WATCHDOG=1 is sent.
  std::shared_ptr<std::atomic<size_t>> probes_pending_;
  int64_t next_watchdog_ms_ = 0;
  // The snapshot taken for the last LIST_CONNECTIONS: the other LIST_* of
  // the same requester shortly after are answered from it, so one
  // `ringsmbctl status` shows one consistent picture.
  struct Cached {
    uint32_t port = 0;
    int64_t taken_ms = 0;
    ipc::ServerStatus status;
  } cached_;
};

}  // namespace ringsmb::transport
