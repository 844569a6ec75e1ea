// The request side of ringsmb-ctld: answers ctl_abi.hpp messages with the
// in-process policy engine (make_local_control_plane), so the data plane's
// two control planes (in-process and netlink) make identical decisions.
// Single-threaded: one datagram at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.hpp"
#include "config/config.hpp"
#include "ipc/control_plane.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/nl_socket.hpp"
#include "control/pipe_table.hpp"
#include "ringsmb-ctld/ctl_channels.hpp"

namespace ringsmb::ctld {

struct Outgoing {
  uint32_t port = 0;
  Bytes bytes;
};

class CtlServer {
 public:
  CtlServer(std::string config_path, config::Config cfg);
  ~CtlServer();

  // Handles one datagram from FROM_PORT; returns what to send (the reply,
  // and for SHUTDOWN the notice to the data plane). Drives the tests too.
  std::vector<Outgoing> handle(const uint8_t* data, size_t len, uint32_t from_port);
  // Re-reads the configuration file and the user database. On a bad file
  // the previous configuration stays; the error text is returned. On
  // success, the file's warnings (one a line, may be empty). Both are logged.
  std::expected<std::string, std::string> reload();
  bool shutdown_requested() const { return shutdown_; }
  void request_shutdown() { shutdown_ = true; }
  uint32_t data_plane_port() const { return data_plane_port_; }

  // Serves the request port REQUESTS and the channels opened through it
  // until shutdown is requested. EXTRA_FD (a signalfd) is polled too;
  // ON_EXTRA runs when it is readable.
  void serve(ipc::NlSocket& requests, int extra_fd, const std::function<void()>& on_extra);
  // Tells the registered data plane (on its channel) that we are going.
  void announce_shutdown();
  // Another socket serve() polls (data plane = ksmbd: ksmbd.ko's netlink
  // socket); ON_READY runs when FD is readable.
  void add_poll_source(int fd, std::function<void()> on_ready) { sources_.push_back({fd, std::move(on_ready)}); }
  // Runs after every successful reload (SIGHUP or RELOAD) with the new configuration.
  void on_reloaded(std::function<void(const config::Config&)> hook) { reloaded_ = std::move(hook); }

 private:
  std::vector<Outgoing> dispatch(const ipc::Message& m, uint32_t from_port);
  Bytes on_starting_up(const ipc::Message& m, uint32_t from_port);
  Bytes on_login(const ipc::Message& m);
  Bytes on_kerberos_login(const ipc::Message& m);
  Bytes on_tree_connect(const ipc::Message& m);
  Bytes on_share_config(const ipc::Message& m);
  Bytes on_reload(const ipc::Message& m);
  std::vector<Outgoing> on_shutdown(const ipc::Message& m, uint32_t from_port);
  Bytes status_reply(const ipc::Message& m, NtStatus status, const std::string& text = {});
  Bytes on_rpc(const ipc::Message& m);  // ctl_rpc.cpp
  Bytes on_rpc_open(const ipc::Message& m);
  void drop_pipes(const char* why);
  // Handles up to BUDGET datagrams waiting on SOCK; false when SOCK (a
  // channel) was closed because its peer is gone.
  bool drain(ipc::NlSocket& sock, bool is_request_port, int budget);
  // Sends O in reply to a datagram from FROM_PORT that came in on ARRIVAL;
  // anything else (the SHUTDOWN notice) goes on the peer's channel.
  bool send_outgoing(ipc::NlSocket& arrival, uint32_t from_port, const Outgoing& o);

  std::string config_path_;
  config::Config cfg_;
  std::unique_ptr<ipc::ControlPlane> policy_;
  uint32_t data_plane_port_ = 0;
  uint32_t data_plane_pid_ = 0;  // of the last registered data plane, kept across its exit
  uint32_t events_seq_ = 1;
  bool shutdown_ = false;
  ChannelSet channels_;
  // About the datagram being handled (set by drain): only a STARTING_UP
  // that came to the request port opens a channel.
  pid_t peer_pid_ = 0;
  bool via_request_port_ = true;
  // Open IPC$ pipes by the handle ringsmbd chose (RPC_OPEN).
  control::PipeTable pipes_;
  struct PollSource {
    int fd;
    std::function<void()> on_ready;
  };
  std::vector<PollSource> sources_;
  std::function<void(const config::Config&)> reloaded_;
};

}  // namespace ringsmb::ctld
