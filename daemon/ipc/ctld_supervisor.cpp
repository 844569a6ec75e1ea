#include "ipc/ctld_supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common/log.hpp"
#include "ipc/ctl_codec.hpp"

extern char** environ;

namespace ringsmb::ipc {
namespace {

using namespace abi;

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Heartbeats only where no pidfd tells of ctld's exit (Linux < 5.3).
constexpr int64_t kHeartbeatIntervalMs = 2000;
constexpr int kRetryMs = 100;  // a handshake to retry, a child to reap without a pidfd

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return int(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by ") + strsignal(WTERMSIG(status));
  return "stopped";
}

}  // namespace

CtldSupervisor::CtldSupervisor(CtldLink& link, NetlinkOptions opts, std::string state_dir)
    : link_(link), opts_(std::move(opts)), state_dir_(std::move(state_dir)) {}

CtldSupervisor::~CtldSupervisor() {
  stop_ = true;
  link_.changed.signal();
  if (thread_.joinable()) thread_.join();
  uint32_t port = link_.port.exchange(0), channel = channel_port_.load();
  if (port && channel && sock_.fd() >= 0) {
    MsgBuilder b(CMD_SHUTTING_DOWN, seq_++, true);
    b.u32(ATTR_PID, uint32_t(getpid()));
    sock_.send(channel, b.wire());
  }
  stop_child();
  unwatch_exit();
}

bool CtldSupervisor::start(std::string& error) {
  if (!link_.changed.valid()) {
    error = std::string("eventfd: ") + strerror(errno);
    return false;
  }
  auto s = NlSocket::open(0);
  if (!s) {
    error = s.error();
    return false;
  }
  sock_ = std::move(*s);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ringsmbd-super");
    run();
  });
  return true;
}

bool CtldSupervisor::wait_ready(int timeout_ms) const {
  int64_t deadline = now_ms() + timeout_ms;
  while (link_.port.load() == 0) {
    if (now_ms() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void CtldSupervisor::run() {
  while (!stop_) {
    if (!opts_.ctld_path.empty()) {
      reap();
      if (child_ == 0) spawn();
    }
    if (link_.port.load() == 0) {
      try_handshake();
    } else if (exit_fd_ < 0 && now_ms() - last_heartbeat_ms_ >= kHeartbeatIntervalMs) {
      heartbeat();
    }
    wait();
  }
}

int CtldSupervisor::sleep_ms() const {
  if (link_.port.load() == 0 || (exit_fd_ < 0 && child_ != 0)) return kRetryMs;
  if (exit_fd_ >= 0) return -1;
  return int(std::clamp<int64_t>(last_heartbeat_ms_ + kHeartbeatIntervalMs - now_ms(), 0, kHeartbeatIntervalMs));
}

void CtldSupervisor::wait() {
  pollfd p[3] = {{sock_.fd(), POLLIN, 0}, {link_.changed.fd(), POLLIN, 0}, {exit_fd_, POLLIN, 0}};
  if (poll(p, 3, sleep_ms()) <= 0) return;  // EINTR, or a deadline
  if (p[1].revents) link_.changed.clear();
  if (p[0].revents) pump(0, 0, nullptr);  // ctld's events (SHUTDOWN, SHUTTING_DOWN), late replies
  if (p[2].revents && opts_.ctld_path.empty()) {  // an external ctld exited; a child is reaped by run()
    LOG_WARN("ringsmb-ctld (port %u) exited", link_.port.load());
    unwatch_exit();
    link_.lost(link_.port.load());
  }
}

void CtldSupervisor::watch_exit(pid_t pid) {
  unwatch_exit();
  if (pid > 0) exit_fd_ = pidfd_open(pid);
}

void CtldSupervisor::unwatch_exit() {
  if (exit_fd_ >= 0) close(exit_fd_);
  exit_fd_ = -1;
}

void CtldSupervisor::spawn() {
  // A ctld that dies right after start (bad config) is restarted at most
  // every 5 seconds instead of in a tight loop.
  int64_t now = now_ms();
  if (fast_failures_ >= 3 && now - last_spawn_ms_ < 5000) return;
  std::vector<std::string> args = {opts_.ctld_path, "--config", opts_.config_path, "--foreground",
                                   "--parent", std::to_string(getpid())};
  if (opts_.log_level >= 0) args.insert(args.end(), {"--log-level", std::to_string(opts_.log_level)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  // ringsmbd blocks these for sigwait and ignores SIGPIPE; ctld must not inherit that.
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  // The request socket: bound here, inherited by ctld as descriptor 3.
  auto requests = NlSocket::open(0);
  if (!requests) {
    LOG_ERROR("cannot start %s: %s", opts_.ctld_path.c_str(), requests.error().c_str());
    posix_spawnattr_destroy(&attr);
    last_spawn_ms_ = now;
    ++fast_failures_;
    return;
  }
  constexpr int kInheritedFd = 3;
  int fd = requests->fd() == kInheritedFd ? fcntl(kInheritedFd, F_DUPFD_CLOEXEC, 10) : requests->fd();
  args.insert(args.end(), {"--netlink-fd", std::to_string(kInheritedFd)});
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, kInheritedFd);  // dup2 clears FD_CLOEXEC
  pid_t pid = 0;
  int err = posix_spawn(&pid, opts_.ctld_path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (fd != requests->fd()) close(fd);
  posix_spawnattr_destroy(&attr);
  last_spawn_ms_ = now;
  if (err != 0) {
    LOG_ERROR("cannot start %s: %s", opts_.ctld_path.c_str(), strerror(err));
    ++fast_failures_;
    return;
  }
  child_port_ = requests->port();  // our copy closes here: the port dies with ctld
  child_ = pid;
  watch_exit(pid);
  LOG_INFO("started ringsmb-ctld (pid %d)", int(pid));
}

void CtldSupervisor::reap() {
  if (child_ == 0) return;
  int status = 0;
  pid_t r = waitpid(child_.load(), &status, WNOHANG);
  if (r == 0) return;
  bool fast = now_ms() - last_spawn_ms_ < 2000;
  fast_failures_ = fast ? fast_failures_ + 1 : 0;
  LOG_ERROR("ringsmb-ctld (pid %d) %s; logins and tree connects fail until it is back", int(child_.load()),
            describe_exit(status).c_str());
  link_.lost(child_port_);
  child_ = 0;
  child_port_ = 0;
  unwatch_exit();
}

uint32_t CtldSupervisor::target_port() const {
  if (!opts_.ctld_path.empty()) return child_ ? child_port_ : 0;
  return read_port_file(state_dir_ + "/" + kCtldPortFileName);
}

void CtldSupervisor::try_handshake() {
  uint32_t port = target_port();
  if (port == 0) return;
  uint32_t seq = seq_++;
  MsgBuilder b(CMD_STARTING_UP, seq, true);
  b.u32(ATTR_ABI_VERSION, kAbiVersion).u32(ATTR_PID, uint32_t(getpid())).u32(ATTR_ROLE, ROLE_DATA_PLANE);
  // Only ctld's request port may answer the handshake.
  if (sock_.connect_to(port) != 0 || sock_.send(port, b.wire()) != 0) return;  // the next round retries
  uint32_t status = 0, channel = 0;
  if (!pump(kRequestTimeoutMs, seq, &status, &channel)) {
    LOG_WARN("ringsmb-ctld (port %u) did not answer STARTING_UP", port);
    return;
  }
  if (NtStatus(status) != NtStatus::Success || channel == 0) {
    LOG_ERROR("ringsmb-ctld (port %u) refused the handshake: %s", port,
              NtStatus(status) == NtStatus::NotSupported ? "ABI version mismatch" : "no channel");
    return;
  }
  // From now on only our channel at ctld may send to us.
  if (int err = sock_.connect_to(channel)) {
    LOG_ERROR("control plane: connecting to channel %u: %s", channel, strerror(err));
    return;
  }
  channel_port_ = channel;
  if (opts_.ctld_path.empty()) watch_exit(reply_pid_);  // a child is watched from its spawn
  link_.port = port;
  last_heartbeat_ms_ = now_ms();
  LOG_INFO("control plane: ringsmb-ctld (request port %u) is connected", port);
}

void CtldSupervisor::heartbeat() {
  uint32_t port = link_.port.load();
  uint32_t seq = seq_++;
  last_heartbeat_ms_ = now_ms();
  MsgBuilder b(CMD_HEARTBEAT, seq, true);
  if (int err = sock_.send(channel_port_, b.wire())) {
    LOG_WARN("ringsmb-ctld (port %u) is gone (%s)", port, strerror(err));
    link_.lost(port);
    return;
  }
  if (!pump(kRequestTimeoutMs, seq, nullptr)) LOG_WARN("ringsmb-ctld (port %u) missed a heartbeat", port);
}

bool CtldSupervisor::pump(int timeout_ms, uint32_t want_seq, uint32_t* status, uint32_t* channel) {
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    int left = std::max(0, int(deadline - now_ms()));  // 0: only what has arrived
    Datagram d;
    if (!sock_.receive(d, left)) return false;
    auto m = parse_message(sock_.buffer(), d.size);
    if (!m) {
      LOG_WARN("ctl: rejected message from port %u: %s", d.port, to_string(m.error()));
      continue;
    }
    if (m->is_request) {
      handle_event(m->cmd, d.port);
      continue;
    }
    if (want_seq != 0 && m->seq == want_seq) {
      if (status) *status = m->u32(ATTR_STATUS);
      if (channel) *channel = m->u32(ATTR_CHANNEL_PORT);
      reply_pid_ = d.cred.pid;
      return true;
    }
  }
}

void CtldSupervisor::handle_event(uint8_t cmd, uint32_t from) {
  // Only the ctld we talk to may stop us, through our channel (the kernel
  // refuses other senders already; this check keeps the rule explicit).
  uint32_t expected = channel_port_.load();
  if (link_.port.load() == 0 || from != expected) {
    LOG_WARN("ctl: ignoring %s from port %u, which is not our ringsmb-ctld", cmd_name(cmd), from);
    return;
  }
  if (cmd == CMD_SHUTDOWN) {
    LOG_INFO("ringsmb-ctld asks the server to shut down");
    stop_ = true;  // no restart of the ctld that is about to exit
    kill(getpid(), SIGTERM);  // run_server's sigwait takes it
  } else if (cmd == CMD_SHUTTING_DOWN) {
    LOG_WARN("ringsmb-ctld (channel %u) is shutting down", from);
    link_.lost(link_.port.load());
  }
}

void CtldSupervisor::reload() {
  pid_t child = child_;
  if (child > 0) {
    kill(child, SIGHUP);
  } else if (link_.port.load() != 0) {
    MsgBuilder b(CMD_RELOAD, seq_++, true);  // the reply is consumed by pump
    sock_.send(channel_port_, b.wire());
  }
}

void CtldSupervisor::stop_child() {
  pid_t child = child_;
  if (child <= 0) return;
  kill(child, SIGTERM);
  for (int i = 0; i < 40; ++i) {  // two seconds to exit cleanly
    if (waitpid(child, nullptr, WNOHANG) == child) {
      child_ = 0;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  child_ = 0;
}

}  // namespace ringsmb::ipc
