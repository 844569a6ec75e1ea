// ringsmbd: the data-plane daemon.
//
//   ringsmbd --config FILE [--foreground]   serve the shares of FILE; spawns and
//                                            supervises ringsmb-ctld (the control plane)
//   ringsmbd --config FILE --no-ctld         the same with the control plane in-process
//   ringsmbd --config FILE --ctld-external   use a ringsmb-ctld started separately (systemd)
//   ringsmbd --demo [DIR]                    serve a demo share on 127.0.0.1:4450 (in-process
//                                            control plane: one binary, nothing to find)
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "common/log.hpp"
#include "common/sd_notify.hpp"
#include "config/config.hpp"
#include "transport/server.hpp"

namespace {

using namespace ringsmb;

constexpr uint16_t kDemoPort = 4450;
constexpr const char* kDemoUser = "demo";
constexpr const char* kDemoPassword = "demo";

// The embedded default: one writable share and one user, loopback only.
std::string demo_config_text(const std::string& dir) {
  return "[global]\n"
         "  tcp port = " + std::to_string(kDemoPort) + "\n"
         "  interfaces = 127.0.0.1\n"
         "  bind interfaces only = yes\n"
         "  users db = " + dir + "/users.db\n"
         "  state directory = " + dir + "\n"
         "  netbios name = RINGSMB\n"
         "\n[demo]\n"
         "  path = " + dir + "/share\n"
         "  comment = ringsmb demo share\n"
         "  writeable = yes\n";
}

std::string current_unix_user() {
  struct passwd* pw = getpwuid(geteuid());
  return pw ? pw->pw_name : "root";
}

bool prepare_demo(const std::string& dir, config::Config& cfg) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/share", ec);
  if (ec) {
    fprintf(stderr, "ringsmbd: cannot create %s/share: %s\n", dir.c_str(), ec.message().c_str());
    return false;
  }
  auto parsed = config::parse_config_text(demo_config_text(dir), "<demo>");
  if (!parsed) {
    fprintf(stderr, "ringsmbd: %s\n", parsed.error().c_str());
    return false;
  }
  cfg = parsed->config;
  auth::UserDb db;
  db.upsert({kDemoUser, current_unix_user(), auth::nt_hash_from_password(kDemoPassword)});
  auto saved = db.save(cfg.global.users_db);
  if (!saved) {
    fprintf(stderr, "ringsmbd: %s\n", saved.error().c_str());
    return false;
  }
  return true;
}

// ringsmb-ctld is installed next to ringsmbd (sbin/, or daemon/ in a build tree).
std::string default_ctld_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "ringsmb-ctld";
  return (self.parent_path() / "ringsmb-ctld").string();
}

// Fills the control-plane part of OPTS; false (with a message) when the
// ringsmb-ctld binary to spawn does not exist.
bool choose_control_plane(transport::ServerOptions& opts, bool no_ctld, bool external, const std::string& ctld_path,
                          const std::string& config_path, int log_level) {
  if (no_ctld) return true;
  opts.use_ctld = true;
  opts.ctld.config_path = std::filesystem::absolute(config_path).string();
  opts.ctld.log_level = log_level;
  if (external) return true;
  opts.ctld.ctld_path = ctld_path.empty() ? default_ctld_path() : ctld_path;
  if (access(opts.ctld.ctld_path.c_str(), X_OK) != 0) {
    fprintf(stderr, "ringsmbd: %s: %s (use --ctld PATH, or --no-ctld for the in-process control plane)\n",
            opts.ctld.ctld_path.c_str(), strerror(errno));
    return false;
  }
  return true;
}

// One line that works pasted into a shell: the command, then a comment.
void print_demo_banner(const std::string& dir) {
  printf("smbclient //127.0.0.1/demo -p %u -U %s%%%s    # share [demo] = %s/share; Ctrl-C stops ringsmbd\n",
         kDemoPort, kDemoUser, kDemoPassword, dir.c_str());
  fflush(stdout);
}

// Every connection and every open file is an fd: take the hard limit, not
// the 1024 soft default, so a busy server does not fail accept() or CREATE.
void raise_fd_limit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// The configuration file, its errors and warnings on stderr (one a line);
// false when it cannot be served (an error, or data plane = ksmbd).
bool load_config(const std::string& config_path, config::Config& cfg) {
  auto parsed = config::parse_config_file(config_path);
  if (!parsed) {
    for (size_t pos = 0, nl; pos < parsed.error().size(); pos = nl + 1) {
      nl = parsed.error().find('\n', pos);
      if (nl == std::string::npos) nl = parsed.error().size();
      fprintf(stderr, "ringsmbd: %s\n", parsed.error().substr(pos, nl - pos).c_str());
    }
    return false;
  }
  for (const auto& w : parsed->warnings) fprintf(stderr, "ringsmbd: warning: %s\n", w.c_str());
  cfg = parsed->config;
  if (cfg.global.data_plane == config::DataPlane::Ksmbd) {
    fprintf(stderr, "ringsmbd: %s says data plane = ksmbd: the kernel's ksmbd serves it; start ringsmb-ctld "
            "(docs/kmod-shim.md)\n", config_path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists: takes $NOTIFY_SOCKET out of the environment
  // that ringsmb-ctld inherits.
  sd::init_from_environment();
  set_log_identifier("ringsmbd");
  CLI::App app{"ringsmbd: SMB2/SMB3 file server (data plane)"};
  std::string config_path = "/etc/ringsmb/ringsmb.conf";
  bool foreground = false, force_epoll = false;
  std::string demo_dir;
  int log_level = -1;
  app.add_option("-c,--config", config_path, "configuration file");
  app.add_flag("-F,--foreground", foreground, "stay in the foreground, log to stderr");
  app.add_flag("--epoll", force_epoll, "use the epoll backend instead of io_uring");
  auto* demo = app.add_option("--demo", demo_dir, "run the embedded demo configuration in DIR")
                   ->expected(0, 1)
                   ->default_str("/tmp/ringsmb-demo");
  app.add_option("-d,--log-level", log_level,
                 "log level, as the 'log level' key (0 errors and warnings, 1 notices, 2-10 debug); "
                 "overrides the file's, also on reload")
      ->check(CLI::Range(0, kMaxLogLevel));
  bool no_ctld = false, ctld_external = false;
  std::string ctld_path;
  app.add_flag("--no-ctld", no_ctld, "keep the control plane (users, shares, NTLM) inside ringsmbd");
  app.add_flag("--ctld-external", ctld_external, "use a separately started ringsmb-ctld (found by its pid file)");
  app.add_option("--ctld", ctld_path, "the ringsmb-ctld binary to spawn (default: next to ringsmbd)");
  CLI11_PARSE(app, argc, argv);

  config::Config cfg;
  if (demo->count()) {
    if (demo_dir.empty()) demo_dir = "/tmp/ringsmb-demo";
    demo_dir = std::filesystem::absolute(demo_dir).string();
    if (!prepare_demo(demo_dir, cfg)) return 1;
    foreground = true;
  } else {
    if (!load_config(config_path, cfg)) return 1;
  }
  if (log_level >= 0) pin_log_level(log_level);
  else set_log_level(cfg.global.log_level);
  raise_fd_limit();
  transport::ServerOptions opts;
  opts.force_epoll = force_epoll;
  if (demo->count()) opts.on_ready = [&] { print_demo_banner(demo_dir); };
  else opts.config_path = std::filesystem::absolute(config_path).string();
  // Before daemon(), which changes to /: the config path is made absolute here.
  if (!demo->count() && !choose_control_plane(opts, no_ctld, ctld_external, ctld_path, config_path, log_level))
    return 1;
  // Under systemd (Type=notify) ringsmbd must stay the main process.
  if (sd::enabled()) foreground = true;
  if (!foreground && daemon(0, 0) != 0) {
    perror("ringsmbd: daemon");
    return 1;
  }
  if (!foreground) log_to_syslog("ringsmbd");
  return transport::run_server(cfg, opts);
}
