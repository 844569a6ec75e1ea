// ringsmb-ctld: the control-plane daemon. Holds the user database and the
// share policy, verifies NTLMv2 and answers ringsmbd and ringsmbctl over
// netlink (daemon/ipc/ctl_abi.hpp).
//
//   ringsmb-ctld --config FILE [--foreground] [--parent PID] [--netlink-fd N]
//                [--log-level N]
//
// --parent and --netlink-fd are how ringsmbd starts it: ctld then dies with
// its parent, so a killed ringsmbd never leaves a control daemon behind, and
// answers on the request socket ringsmbd bound for it (a port the kernel
// chose, known to ringsmbd before ctld runs, so nobody can take it first).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "common/log.hpp"
#include "common/sd_notify.hpp"
#include "config/config.hpp"
#include "ipc/ctl_abi.hpp"
#include "ringsmb-ctld/ctl_server.hpp"
#include "ipc/nl_socket.hpp"
#include "kmod-shim/ksmbd_driver.hpp"

namespace {

using namespace ringsmb;

std::string pid_file_path(const config::Config& cfg) {
  return cfg.global.state_directory + "/" + ipc::abi::kPidFileName;
}

std::string port_file_path(const config::Config& cfg) {
  return cfg.global.state_directory + "/" + ipc::abi::kCtldPortFileName;
}

// Written to a temporary name and renamed, so a reader never sees half a pid.
bool write_pid_file(const std::string& path) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << getpid() << "\n";
    if (!out.flush()) return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

void remove_pid_file_if_ours(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  if (in >> pid && pid == getpid()) unlink(path.c_str());
}

int make_signalfd() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

void on_signal(int sfd, ctld::CtlServer& server) {
  signalfd_siginfo si{};
  while (read(sfd, &si, sizeof si) == ssize_t(sizeof si)) {
    if (si.ssi_signo == SIGHUP) {
      sd::notify("RELOADING=1");
      auto r = server.reload();
      sd::notify(r ? "READY=1\nSTATUS=configuration reloaded" : "READY=1\nSTATUS=reload failed: bad configuration");
    } else {
      LOG_INFO("signal %u: ringsmb-ctld stopping", si.ssi_signo);
      server.request_shutdown();
    }
  }
}

struct CtldOptions {
  std::string config_path = "/etc/ringsmb/ringsmb.conf";
  bool foreground = false;
  int parent = 0, log_level = -1, netlink_fd = -1;
};

void add_options(CLI::App& app, CtldOptions& o) {
  app.add_option("-c,--config", o.config_path, "configuration file");
  app.add_flag("-F,--foreground", o.foreground, "stay in the foreground, log to stderr");
  app.add_option("--parent", o.parent, "exit when this process (the supervising ringsmbd) exits");
  app.add_option("-d,--log-level", o.log_level,
                 "log level, as the 'log level' key (0 errors and warnings, 1 notices, 2-10 debug); "
                 "overrides the file's, also on reload")
      ->check(CLI::Range(0, kMaxLogLevel));
  app.add_option("--netlink-fd", o.netlink_fd, "answer on this inherited, bound netlink socket (given by ringsmbd)");
}

void set_up_logging(const config::Config& cfg, const CtldOptions& o) {
  log_to_syslog_if_inherited("ringsmb-ctld");
  // Spawned by ringsmbd, ctld writes to ringsmbd's journal stream, which the
  // journal shows under ringsmbd's name: it opens one under its own.
  if (o.parent > 0) own_journal_stream("ringsmb-ctld");
  if (o.log_level >= 0) pin_log_level(o.log_level);
  else set_log_level(cfg.global.log_level);
}

// data plane = ksmbd: register with ksmbd.ko before anything else, so a
// missing, incompatible or already driven module stops us with a message
// on stderr and a non-zero exit (false).
bool start_ksmbd(const config::Config& cfg, const CtldOptions& o, std::unique_ptr<kmod::KsmbdDriver>& ksmbd) {
  if (cfg.global.data_plane != config::DataPlane::Ksmbd) return true;
  if (o.parent > 0 || o.netlink_fd >= 0) {
    fprintf(stderr, "ringsmb-ctld: %s says data plane = ksmbd; ringsmbd does not use it\n", o.config_path.c_str());
    return false;
  }
  auto driver = kmod::KsmbdDriver::start(cfg);
  if (!driver) {
    fprintf(stderr, "ringsmb-ctld: data plane = ksmbd: %s\n", driver.error().c_str());
    return false;
  }
  ksmbd = std::move(*driver);
  return true;
}

// Answers on netlink (and drives ksmbd.ko) until a signal stops it.
int serve(config::Config cfg, const CtldOptions& o, std::unique_ptr<kmod::KsmbdDriver> ksmbd) {
  int sfd = make_signalfd();
  // A port the kernel chose (here or in the ringsmbd that spawned us): no
  // local user can bind it before we start.
  auto sock = o.netlink_fd >= 0 ? ipc::NlSocket::adopt(o.netlink_fd) : ipc::NlSocket::open(0);
  if (!sock) {
    LOG_ERROR("ringsmb-ctld: %s", sock.error().c_str());
    return 1;
  }
  std::string pid_file = pid_file_path(cfg), port_file = port_file_path(cfg), error;
  if (!write_pid_file(pid_file)) LOG_WARN("cannot write %s: %m", pid_file.c_str());
  if (!ipc::write_port_file(port_file, sock->port(), error)) LOG_WARN("%s", error.c_str());
  ctld::CtlServer server(o.config_path, std::move(cfg));
  if (ksmbd) {
    server.add_poll_source(ksmbd->fd(), [&] { ksmbd->on_readable(); });
    server.on_reloaded([&](const config::Config& c) { ksmbd->reload(c); });
  }
  LOG_INFO("ringsmb-ctld (pid %d) ready, ABI version %u", int(getpid()), ipc::abi::kAbiVersion);
  sd::notify("READY=1\nSTATUS=answering on netlink port " + std::to_string(sock->port()));
  server.serve(*sock, sfd, [&] { on_signal(sfd, server); });
  sd::notify("STOPPING=1");
  server.announce_shutdown();
  if (ksmbd) kmod::stop_ksmbd_server();
  if (ipc::read_port_file(port_file) == sock->port()) unlink(port_file.c_str());
  remove_pid_file_if_ours(pid_file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Run as its own systemd unit (ringsmbd --ctld-external), ctld reports
  // readiness itself; spawned by ringsmbd it gets no NOTIFY_SOCKET.
  sd::init_from_environment();
  set_log_identifier("ringsmb-ctld");
  CLI::App app{"ringsmb-ctld: ringsmb control-plane daemon (users, shares, authentication)"};
  CtldOptions o;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);

  if (o.parent > 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != o.parent) return 0;  // the parent died before prctl took effect
  }
  auto parsed = config::parse_config_file(o.config_path);
  if (!parsed) {
    fprintf(stderr, "ringsmb-ctld: %s\n", parsed.error().c_str());
    return 1;
  }
  config::Config cfg = parsed->config;
  set_up_logging(cfg, o);
  std::unique_ptr<kmod::KsmbdDriver> ksmbd;
  if (!start_ksmbd(cfg, o, ksmbd)) return 1;
  if (sd::enabled()) o.foreground = true;
  if (!o.foreground && daemon(0, 0) != 0) {
    perror("ringsmb-ctld: daemon");
    return 1;
  }
  return serve(std::move(cfg), o, std::move(ksmbd));
}
