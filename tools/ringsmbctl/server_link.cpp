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

Failure not_running(Daemon d, const std::string& why) {
  return {kExitNotRunning, std::string(daemon_name(d)) + " is not running (" + why + ")"};
}

}  // namespace

const char* daemon_name(Daemon d) { return d == Daemon::Ctld ? "ringsmb-ctld" : "ringsmbd"; }

std::expected<Answer, Failure> ask(const config::Config& cfg, Daemon daemon, Cmd cmd,
                                   std::optional<uint64_t> session_id,
                                   const std::vector<std::pair<Attr, uint32_t>>& u32s) {
  return ask_with(cfg, daemon, cmd, [&](ipc::MsgBuilder& b) {
    if (session_id) b.u64(ATTR_SESSION_ID, *session_id);
    for (const auto& [attr, value] : u32s) b.u32(attr, value);
  });
}

std::expected<Answer, Failure> ask_with(const config::Config& cfg, Daemon daemon, Cmd cmd, const RequestFill& fill) {
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
  fill(b);
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

std::expected<config::Config, std::string> load_config_for_server(const std::string& path) {
  auto checked = config::check_config_file(path);
  if (!checked) return std::unexpected(checked.error());
  return std::move(checked->config);
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (nl > pos) out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

}  // namespace

std::expected<Reloaded, Failure> reload_server(const config::Config& cfg, const std::string& config_path) {
  // ctld first: its answer comes after the users and shares are reloaded,
  // so a login right after sees them.
  auto a = ask(cfg, Daemon::Ctld, CMD_RELOAD);
  Daemon who = Daemon::Ctld;
  if (!a && a.error().code == kExitNotRunning) {
    a = ask(cfg, Daemon::Ringsmbd, CMD_RELOAD);
    who = Daemon::Ringsmbd;
    if (!a && a.error().code == kExitNotRunning) return std::unexpected(Failure{kExitNotRunning, "the server is not running"});
  }
  if (!a) return std::unexpected(a.error());
  if (a->status != NtStatus::Success)
    return std::unexpected(Failure{kExitError, "reload failed (the running server keeps its configuration):\n" +
                                                   (a->text.empty() ? "no reason given" : a->text)});
  Reloaded r{daemon_name(who), lines_of(a->text)};
  if (who == Daemon::Ctld) {
    // The ringsmbd served by this ctld takes the file's log level, as its
    // SIGHUP does. A ringsmbd that is not running is no error here.
    auto parsed = config::parse_config_file(config_path);
    if (parsed)
      (void)ask(cfg, Daemon::Ringsmbd, CMD_DEBUG, std::nullopt,
                {{ATTR_LOG_LEVEL, uint32_t(parsed->config.global.log_level)}, {ATTR_LOG_LEVEL_SOURCE, LOG_SOURCE_CONFIG}});
  }
  return r;
}

int apply_to_running_server(const Context& ctx) {
  if (ctx.no_reload) {
    std::cout << "not reloading (--no-reload): run 'ringsmbctl reload' to apply the change\n";
    return kExitOk;
  }
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  auto r = reload_server(*cfg, ctx.config_path);
  if (r) {
    std::cout << "reloaded the running server (" << r->by << "): new logins and tree connects use the change\n";
    return kExitOk;
  }
  if (r.error().code == kExitNotRunning) return kExitOk;  // applies when the server starts
  return fail(r.error().code, "saved, but the running server did not reload: " + r.error().message);
}

}  // namespace ringsmb::ctl
