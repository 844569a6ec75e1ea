// How ringsmbctl reaches the running server: netlink (ctl_abi.hpp) to
// ringsmb-ctld or ringsmbd, each found through the port file it writes in
// the state directory (0600, read only when root or the service user owns
// it). Our socket is connected to that port, so no other local process can
// send us anything, and a send waits for room when the daemon's queue is
// being flooded. Both answer only root and their own uid; everyone else
// gets no answer at all, which ask() reports as "permission denied" when we
// are not root.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>

#include "ctl.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/nl_socket.hpp"

namespace ringsmb::ctl {
namespace {

using namespace ipc::abi;

// ringsmbd gathers status from every worker (up to 2 s) before answering.
constexpr int kAnswerTimeoutMs = 5000;

std::string port_file(const config::Config& cfg, Daemon d) {
  return cfg.global.state_directory + "/" + (d == Daemon::Ctld ? kCtldPortFileName : kDataPlanePortFileName);
}

const char* daemon_name(Daemon d) { return d == Daemon::Ctld ? "ringsmb-ctld" : "ringsmbd"; }

Failure not_running(Daemon d, const std::string& why) {
  return {kExitNotRunning, std::string(daemon_name(d)) + " is not running (" + why + ")"};
}

}  // namespace

std::expected<Answer, Failure> ask(const config::Config& cfg, Daemon daemon, Cmd cmd,
                                   std::optional<uint64_t> session_id) {
  std::string file = port_file(cfg, daemon);
  uint32_t port = ipc::read_port_file(file);
  if (port == 0) {
    // The file is 0600: a user who cannot read it gets the same answer as
    // one whose request the daemon drops.
    if (geteuid() != 0 && access(file.c_str(), F_OK) == 0 && access(file.c_str(), R_OK) != 0)
      return std::unexpected(Failure{kExitPermission, std::string("permission denied: run as root (") +
                                                          daemon_name(daemon) + " answers only root and its own user)"});
    return std::unexpected(not_running(daemon, "no usable " + file));
  }
  // One socket for the process: ringsmbd recognises the requests of one
  // `status` by their port and answers them from one snapshot.
  static std::optional<ipc::NlSocket> sock;
  if (!sock) {
    auto s = ipc::NlSocket::open(0);
    if (!s) return std::unexpected(Failure{kExitError, s.error()});
    sock = std::move(*s);
  }
  if (int err = sock->connect_to(port))
    return std::unexpected(Failure{kExitError, std::string("netlink connect: ") + strerror(err)});
  static uint32_t next_seq = 1;
  uint32_t seq = next_seq++;
  ipc::MsgBuilder b(cmd, seq, true);
  if (session_id) b.u64(ATTR_SESSION_ID, *session_id);
  if (int err = sock->send(port, b.wire())) {
    if (err == ECONNREFUSED) return std::unexpected(not_running(daemon, "stale " + file));
    return std::unexpected(Failure{kExitError, std::string(daemon_name(daemon)) + ": " + strerror(err)});
  }
  Answer a;
  ipc::Datagram d;
  while (sock->receive(d, kAnswerTimeoutMs)) {
    auto m = ipc::parse_message(sock->buffer(), d.size);
    if (d.port != port || !m || m->is_request || m->seq != seq || m->cmd != cmd) continue;
    a.status = NtStatus(m->u32(ATTR_STATUS));
    a.text = m->str(ATTR_TEXT);
    a.datagrams.emplace_back(sock->buffer(), sock->buffer() + d.size);
    if (m->u32(ATTR_MORE_ENTRIES) == 0) return a;
  }
  if (geteuid() != 0)
    return std::unexpected(Failure{kExitPermission, std::string("permission denied: run as root (") +
                                                        daemon_name(daemon) + " answers only root and its own user)"});
  return std::unexpected(Failure{kExitError, std::string("no answer from ") + daemon_name(daemon) + " (pid " +
                                                 std::to_string(port) + ")"});
}

std::expected<std::string, Failure> reload_server(const config::Config& cfg) {
  auto a = ask(cfg, Daemon::Ctld, CMD_RELOAD);
  std::string who = "ringsmb-ctld";
  if (!a && a.error().code == kExitNotRunning) {
    a = ask(cfg, Daemon::Ringsmbd, CMD_RELOAD);
    who = "ringsmbd";
    if (!a && a.error().code == kExitNotRunning) return std::unexpected(Failure{kExitNotRunning, "the server is not running"});
  }
  if (!a) return std::unexpected(a.error());
  if (a->status != NtStatus::Success)
    return std::unexpected(Failure{kExitError, "reload failed" + (a->text.empty() ? "" : ": " + a->text)});
  return who;
}

int apply_to_running_server(const Context& ctx) {
  if (ctx.no_reload) {
    std::cout << "not reloading (--no-reload): run 'ringsmbctl reload' to apply the change\n";
    return kExitOk;
  }
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail(cfg.error());
  auto r = reload_server(*cfg);
  if (r) {
    std::cout << "reloaded the running server (" << *r << "): new logins and tree connects use the change\n";
    return kExitOk;
  }
  if (r.error().code == kExitNotRunning) return kExitOk;  // applies when the server starts
  return fail(r.error().code, "saved, but the running server did not reload: " + r.error().message);
}

}  // namespace ringsmb::ctl
