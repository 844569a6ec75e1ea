// ringsmbd's side of the link to ringsmb-ctld: spawns and restarts it (or
// finds an independently started one through its port file), performs the
// STARTING_UP handshake, sends heartbeats and acts on ctld's events. The
// request port of a ctld that completed the handshake is published in
// CtldLink; 0 means "no control plane now", and requests then fail at once.
// A spawned ctld answers on a socket bound here (port chosen by the
// kernel) and inherited as descriptor 3, so its port is known before it
// runs and no local user can take it first. Heartbeats and events use the
// supervisor's own channel (ctl_abi.hpp, TRANSPORT).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "common/wake_fd.hpp"
#include "ipc/netlink_control_plane.hpp"
#include "ipc/nl_socket.hpp"

namespace ringsmb::ipc {

struct CtldLink {
  std::atomic<uint32_t> port{0};
  // Readable when port went to 0 (or the supervisor is to stop): the
  // supervisor sleeps on it, with no timer while ctld is connected.
  WakeFd changed;
  // Called by a requester whose send was refused: that ctld is gone.
  void lost(uint32_t old_port) {
    if (port.compare_exchange_strong(old_port, 0)) changed.signal();
  }
};

class CtldSupervisor {
 public:
  CtldSupervisor(CtldLink& link, NetlinkOptions opts, std::string state_dir);
  ~CtldSupervisor();  // stops the thread, tells ctld, stops a spawned ctld

  bool start(std::string& error);
  // Blocks until the first handshake succeeded or TIMEOUT_MS passed.
  bool wait_ready(int timeout_ms) const;
  void reload();  // SIGHUP to a spawned ctld, else a RELOAD request

 private:
  void run();
  // Sleeps until a datagram, the child's (or an external ctld's) exit, a
  // lost link or stop; with a deadline only while one is pending (a
  // handshake to retry; Linux < 5.3, which has no pidfd: reaping and
  // heartbeats on a timer).
  void wait();
  int sleep_ms() const;
  void watch_exit(pid_t pid);  // a pidfd of PID, readable when it exits
  void unwatch_exit();
  void spawn();
  void reap();
  void try_handshake();
  void heartbeat();
  uint32_t target_port() const;
  // Receives on the event socket for up to TIMEOUT_MS; handles events and
  // returns true when the reply to WANT_SEQ arrived (status in *STATUS).
  // CHANNEL, when given, receives the reply's CHANNEL_PORT.
  bool pump(int timeout_ms, uint32_t want_seq, uint32_t* status, uint32_t* channel = nullptr);
  void handle_event(uint8_t cmd, uint32_t from);
  void stop_child();

  CtldLink& link_;
  NetlinkOptions opts_;
  std::string state_dir_;
  NlSocket sock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> child_{0};  // read by reload() on the signal thread
  int exit_fd_ = -1;             // pidfd of the child, or of an external ctld
  uint32_t child_port_ = 0;      // the request port the spawned child answers on
  std::atomic<uint32_t> channel_port_{0};  // our channel at the connected ctld
  int64_t last_spawn_ms_ = 0;
  int fast_failures_ = 0;
  int64_t last_heartbeat_ms_ = 0;
  pid_t reply_pid_ = 0;  // the sender of the last reply pump() waited for
  std::atomic<uint32_t> seq_{1};
};

}  // namespace ringsmb::ipc
