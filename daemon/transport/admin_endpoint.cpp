#include "transport/admin_endpoint.hpp"

#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "common/log.hpp"
#include "common/sd_notify.hpp"
#include "ipc/ctl_debug.hpp"
#include "ipc/status_prometheus.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {
namespace {

using namespace ipc::abi;

constexpr int kGatherTimeoutMs = 2000;
constexpr int64_t kSnapshotReuseMs = 2000;

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

Bytes to_bytes(const ipc::MsgBuilder& b) {
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

// Runs fn(worker, index) on each worker's own thread and returns what
// each returned, in the workers' order, once all have answered; an error
// naming how many did not within `timeout_ms` otherwise. The parts outlive
// a timeout because the tasks share them.
template <class Part, class Fn>
std::expected<std::vector<Part>, std::string> ask_each_worker(const std::vector<Worker*>& workers, int timeout_ms,
                                                              Fn fn) {
  struct Parts {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
    std::vector<Part> parts;
  };
  auto p = std::make_shared<Parts>();
  p->left = workers.size();
  p->parts.resize(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) {
    Worker* w = workers[i];
    w->post([p, w, i, fn] {
      Part part = fn(w, i);
      std::lock_guard lock(p->mu);
      p->parts[i] = std::move(part);
      if (--p->left == 0) p->cv.notify_all();
    });
  }
  std::unique_lock lock(p->mu);
  if (!p->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return p->left == 0; }))
    return std::unexpected(std::to_string(p->left) + " worker(s) did not answer within " +
                           std::to_string(timeout_ms) + " ms");
  return std::move(p->parts);
}

}  // namespace

void AdminEndpoint::stop() {
  stop_ = true;
  wake_.signal();
  if (thread_.joinable()) thread_.join();
}

AdminEndpoint::~AdminEndpoint() {
  stop();
  if (!pid_file_.empty()) {
    std::ifstream in(pid_file_);
    long pid = 0;
    if (in >> pid && pid == getpid()) unlink(pid_file_.c_str());
  }
  if (!port_file_.empty() && ipc::read_port_file(port_file_) == sock_.port()) unlink(port_file_.c_str());
}

bool AdminEndpoint::open(const std::string& state_dir, std::string& error) {
  // A port the kernel chooses: nobody can bind it before we start.
  auto s = ipc::NlSocket::open(0);
  if (!s) {
    error = "admin socket: " + s.error();
    return false;
  }
  sock_ = std::move(*s);
  if (!wake_.valid()) {
    error = std::string("admin: eventfd: ") + strerror(errno);
    return false;
  }
  std::string pid_file = state_dir + "/" + kDataPlanePidFileName;
  std::string tmp = pid_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << getpid() << "\n";
    if (!out.flush()) {
      error = "cannot write " + tmp + ": " + strerror(errno);
      return false;
    }
  }
  if (rename(tmp.c_str(), pid_file.c_str()) != 0) {
    error = "cannot write " + pid_file + ": " + strerror(errno);
    return false;
  }
  pid_file_ = pid_file;
  if (!ipc::write_port_file(state_dir + "/" + kDataPlanePortFileName, sock_.port(), error)) return false;
  port_file_ = state_dir + "/" + kDataPlanePortFileName;
  return true;
}

void AdminEndpoint::start(std::vector<Worker*> workers, AdminActions actions) {
  workers_ = std::move(workers);
  actions_ = std::move(actions);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ringsmbd-admin");
    run();
  });
}

std::expected<ipc::ServerStatus, std::string> AdminEndpoint::gather(const std::vector<Worker*>& workers,
                                                                    int timeout_ms) {
  auto parts = ask_each_worker<ipc::ServerStatus>(workers, timeout_ms, [](Worker* w, size_t i) {
    ipc::ServerStatus part;
    w->collect_status(part);
    if (i == 0) w->collect_kept_opens(part);  // the server's, not a worker's
    return part;
  });
  if (!parts) return std::unexpected(parts.error());
  ipc::ServerStatus all;
  for (auto& part : *parts) {
    auto move_into = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    move_into(all.connections, part.connections);
    move_into(all.sessions, part.sessions);
    move_into(all.trees, part.trees);
    move_into(all.open_files, part.open_files);
  }
  return all;
}

std::expected<smb2::WorkerMetrics, std::string> AdminEndpoint::gather_metrics(const std::vector<Worker*>& workers,
                                                                              int timeout_ms) {
  // Each worker's counters are copied on its own thread.
  auto parts =
      ask_each_worker<smb2::WorkerMetrics>(workers, timeout_ms, [](Worker* w, size_t) { return w->metrics(); });
  if (!parts) return std::unexpected(parts.error());
  smb2::WorkerMetrics sum;
  for (const auto& part : *parts) sum.add(part);
  return sum;
}

std::expected<std::string, std::string> AdminEndpoint::prometheus_text(const std::vector<Worker*>& workers) {
  auto status = gather(workers, kGatherTimeoutMs);
  if (!status) return std::unexpected(status.error());
  auto counters = gather_metrics(workers, kGatherTimeoutMs);
  if (!counters) return std::unexpected(counters.error());
  std::ostringstream o;
  ipc::print_prometheus(o, &*status);
  return o.str() + smb2::render_prometheus(*counters);
}

Bytes AdminEndpoint::status_reply(const ipc::Message& m, NtStatus status, const std::string& text) {
  ipc::MsgBuilder b(Cmd(m.cmd), m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(status));
  if (!text.empty()) b.str(ATTR_TEXT, text);
  return to_bytes(b);
}

std::expected<ipc::ServerStatus, std::string> AdminEndpoint::snapshot_for(Cmd cmd, uint32_t from_port) {
  int64_t now = now_ms();
  if (cmd != CMD_LIST_CONNECTIONS && cached_.port == from_port && now - cached_.taken_ms < kSnapshotReuseMs)
    return cached_.status;
  auto status = gather(workers_, kGatherTimeoutMs);
  if (status) cached_ = {from_port, now, *status};
  return status;
}

std::expected<size_t, std::string> AdminEndpoint::on_workers(const std::vector<Worker*>& workers,
                                                             std::function<size_t(Worker&)> act) {
  struct Sum {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
    size_t total = 0;
  };
  auto sum = std::make_shared<Sum>();
  sum->left = workers.size();
  for (Worker* w : workers)
    w->post([sum, w, act] {
      size_t n = act(*w);
      std::lock_guard lock(sum->mu);
      sum->total += n;
      if (--sum->left == 0) sum->cv.notify_all();
    });
  std::unique_lock lock(sum->mu);
  if (!sum->cv.wait_for(lock, std::chrono::milliseconds(kGatherTimeoutMs), [&] { return sum->left == 0; }))
    return std::unexpected(std::to_string(sum->left) + " worker(s) did not answer within " +
                           std::to_string(kGatherTimeoutMs) + " ms");
  return sum->total;
}

std::vector<Bytes> AdminEndpoint::close_share(const ipc::Message& m) {
  std::string share = m.str(ATTR_SHARE_NAME);
  auto n = on_workers(workers_, [share](Worker& w) { return w.close_share(share); });
  if (!n) return {status_reply(m, NtStatus::IoTimeout, n.error())};
  LOG_INFO("CLOSE_SHARE '%s' requested by ringsmbctl: %zu tree connect(s) disconnected", share.c_str(), *n);
  ipc::MsgBuilder b(CMD_CLOSE_SHARE, m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(NtStatus::Success)).u32(ATTR_CLOSED_COUNT, uint32_t(*n));
  return {to_bytes(b)};
}

std::vector<Bytes> AdminEndpoint::handle(const ipc::Message& m, uint32_t from_port) {
  switch (Cmd(m.cmd)) {
    case CMD_LIST_CONNECTIONS:
    case CMD_LIST_SESSIONS:
    case CMD_LIST_TREE_CONNECTS:
    case CMD_LIST_OPEN_FILES: {
      auto status = snapshot_for(Cmd(m.cmd), from_port);
      if (!status) return {status_reply(m, NtStatus::IoTimeout, status.error())};
      return ipc::encode_list_replies(Cmd(m.cmd), m.seq, *status);
    }
    case CMD_CLOSE_SESSION: {
      uint64_t id = m.u64(ATTR_SESSION_ID);
      auto n = on_workers(workers_, [id](Worker& w) -> size_t { return w.close_session(id) ? 1 : 0; });
      if (!n) return {status_reply(m, NtStatus::IoTimeout, n.error())};
      return {status_reply(m, *n ? NtStatus::Success : NtStatus::NotFound)};
    }
    case CMD_CLOSE_FILE: {
      uint64_t id = m.u64(ATTR_FILE_ID);
      auto n = on_workers(workers_, [id](Worker& w) -> size_t { return w.close_file(id) ? 1 : 0; });
      if (!n) return {status_reply(m, NtStatus::IoTimeout, n.error())};
      if (*n == 0 && !workers_.empty()) {  // not on a connection: a disconnected durable open?
        auto kept = on_workers({workers_[0]}, [id](Worker& w) -> size_t { return w.close_kept_file(id) ? 1 : 0; });
        if (!kept) return {status_reply(m, NtStatus::IoTimeout, kept.error())};
        n = kept;
      }
      return {status_reply(m, *n ? NtStatus::Success : NtStatus::NotFound)};
    }
    case CMD_CLOSE_SHARE: return close_share(m);
    case CMD_GET_METRICS: {
      auto counters = gather_metrics(workers_, kGatherTimeoutMs);
      if (!counters) return {status_reply(m, NtStatus::IoTimeout, counters.error())};
      return ipc::encode_text_replies(CMD_GET_METRICS, m.seq, smb2::render_prometheus(*counters));
    }
    case CMD_RELOAD: {
      LOG_INFO("RELOAD requested by ringsmbctl: reloading shares and users for new logins and tree connects");
      auto r = actions_.reload ? actions_.reload() : std::expected<std::string, std::string>{};
      return {r ? status_reply(m, NtStatus::Success, ipc::fit_text_attr(*r))
                : status_reply(m, NtStatus::Unsuccessful, ipc::fit_text_attr(r.error()))};
    }
    case CMD_DEBUG: return {ipc::answer_debug(m, from_port)};
    case CMD_SHUTDOWN:
      LOG_INFO("SHUTDOWN requested by ringsmbctl");
      if (actions_.shutdown) actions_.shutdown();
      return {status_reply(m, NtStatus::Success)};
    case CMD_HEARTBEAT: return {status_reply(m, NtStatus::Success)};
    default: return {status_reply(m, NtStatus::NotSupported, "ringsmbd does not answer this command")};
  }
}

void AdminEndpoint::watchdog_round() {
  uint64_t usec = sd::watchdog_usec();
  if (usec == 0 || workers_.empty()) return;
  int64_t now = now_ms();
  if (now < next_watchdog_ms_) return;
  next_watchdog_ms_ = now + int64_t(usec / 1000 / 2);
  // Ping only when every worker ran the previous round's probe: a worker
  // stuck in a handler makes systemd restart the service.
  if (probes_pending_ && probes_pending_->load() != 0) {
    LOG_WARN("watchdog: %zu worker(s) did not run their probe; not pinging systemd", probes_pending_->load());
  } else {
    sd::notify("WATCHDOG=1");
  }
  if (!probes_pending_ || probes_pending_->load() == 0) {
    probes_pending_ = std::make_shared<std::atomic<size_t>>(workers_.size());
    for (Worker* w : workers_) w->post([p = probes_pending_] { p->fetch_sub(1); });
  }
}

int AdminEndpoint::sleep_ms() const {
  if (sd::watchdog_usec() == 0 || workers_.empty()) return -1;
  return int(std::clamp<int64_t>(next_watchdog_ms_ - now_ms(), 0, INT_MAX));
}

void AdminEndpoint::run() {
  while (!stop_) {
    watchdog_round();
    // Asleep until a request, stop() or the watchdog's next ping: an idle
    // server wakes this thread for nothing else.
    pollfd p[2] = {{sock_.fd(), POLLIN, 0}, {wake_.fd(), POLLIN, 0}};
    if (poll(p, 2, sleep_ms()) <= 0) continue;  // EINTR, or the watchdog is due
    if (p[1].revents) wake_.clear();
    ipc::Datagram d;
    if (!p[0].revents || !sock_.receive(d, 0)) continue;  // POLLERR too: recvmsg takes the error
    auto m = ipc::parse_message(sock_.buffer(), d.size);
    if (!m) {
      LOG_WARN("admin: rejected message from port %u: %s", d.port, ipc::to_string(m.error()));
      continue;
    }
    if (!m->is_request) continue;
    LOG_DEBUG("admin: %s from port %u (pid %d uid %u)", ipc::abi::cmd_name(m->cmd), d.port, int(d.cred.pid),
              unsigned(d.cred.uid));
    for (const auto& reply : handle(*m, d.port)) {
      if (int err = sock_.send(d.port, reply)) {
        LOG_WARN("admin: reply to port %u: %s", d.port, strerror(err));
        break;
      }
    }
  }
}

}  // namespace ringsmb::transport
