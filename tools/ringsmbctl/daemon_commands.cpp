// `ringsmbctl reload` and `ringsmbctl shutdown`: admin commands sent to
// ringsmb-ctld over netlink (daemon/ipc/ctl_abi.hpp). ctld is found through
// the pid file in the configured state directory; it accepts the command
// only from root or its own uid.
#include <cstring>
#include <fstream>

#include "ctl.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/nl_socket.hpp"

namespace ringsmb::ctl {
namespace {

using namespace ipc::abi;

int send_admin(const std::string& config_path, Cmd cmd) {
  auto cfg = load_config(config_path);
  if (!cfg) return fail(cfg.error());
  std::string pid_file = cfg->global.state_directory + "/" + kPidFileName;
  uint32_t port = 0;
  std::ifstream(pid_file) >> port;
  if (port == 0) return fail("ringsmb-ctld is not running (no " + pid_file + ")");
  auto sock = ipc::NlSocket::open(0);
  if (!sock) return fail(sock.error());
  ipc::MsgBuilder b(cmd, 1, true);
  if (int err = sock->send(port, b.wire())) return fail("ringsmb-ctld (pid " + std::to_string(port) + "): " + strerror(err));
  ipc::Datagram d;
  while (sock->receive(d, kRequestTimeoutMs)) {
    auto m = ipc::parse_message(sock->buffer(), d.size);
    if (d.port != port || !m || m->is_request || m->seq != 1) continue;
    if (NtStatus(m->u32(ATTR_STATUS)) == NtStatus::Success) return kExitOk;
    return fail(std::string(cmd_name(cmd)) + " failed" + (m->has(ATTR_TEXT) ? ": " + m->str(ATTR_TEXT) : ""));
  }
  return fail("no answer from ringsmb-ctld");
}

}  // namespace

void add_daemon_commands(CLI::App& app, Context& ctx) {
  app.add_subcommand("reload", "Make ringsmb-ctld re-read the configuration and the user database")
      ->callback([&ctx] { ctx.exit_code = send_admin(ctx.config_path, CMD_RELOAD); });
  app.add_subcommand("shutdown", "Stop the server (ringsmbd and ringsmb-ctld)")
      ->callback([&ctx] { ctx.exit_code = send_admin(ctx.config_path, CMD_SHUTDOWN); });
}

}  // namespace ringsmb::ctl
