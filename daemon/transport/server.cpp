#include "transport/server.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "auth/spnego.hpp"
#include "common/log.hpp"
#include "common/sd_notify.hpp"
#include "crypto/primitives.hpp"
#include "control/local_control_plane.hpp"
#include "control/reloading_control_plane.hpp"
#include "ipc/control_plane.hpp"
#include "smb2/commands/command_table.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/engine/server_context.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "transport/admin_endpoint.hpp"
#include "transport/metrics_http.hpp"
#include "transport/worker.hpp"
#include "vfs/file_info.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::transport {
namespace {

std::vector<ListenAddress> listen_addresses(const config::GlobalConfig& g) {
  std::vector<std::string> hosts;
  if (g.bind_interfaces_only && !g.interfaces.empty()) {
    for (const auto& i : g.interfaces) hosts.push_back(i.substr(0, i.find('/')));  // "addr/prefix" allowed
  } else {
    hosts = {"0.0.0.0", "::"};
  }
  std::vector<ListenAddress> out;
  for (const auto& h : hosts)
    for (uint16_t p : g.tcp_ports) out.push_back({h, p});
  return out;
}

// CHANGE_NOTIFY watches count against the kernel's inotify limits, which
// are per user: say what they are, and when one connection's allowance
// alone exceeds them (docs/configuration.md, "Change notification").
void log_notify_limits(uint32_t per_connection) {
  if (per_connection == 0) return LOG_INFO("change notification is off (max notify watches = 0)");
  vfs::InotifyLimits k = vfs::read_inotify_limits();
  LOG_INFO("change notify: up to %u watched directories per connection; kernel: fs.inotify.max_user_watches = %llu, "
           "max_user_instances = %llu",
           per_connection, (unsigned long long)k.max_user_watches, (unsigned long long)k.max_user_instances);
  if (k.max_user_watches && per_connection > k.max_user_watches)
    LOG_WARN("max notify watches (%u) exceeds fs.inotify.max_user_watches (%llu): WATCH_TREE requests on large "
             "shares fail with STATUS_INSUFFICIENT_RESOURCES once the kernel's limit is reached",
             per_connection, (unsigned long long)k.max_user_watches);
}

void init_context(smb2::ServerContext& ctx, const config::Config& cfg) {
  ctx.config = cfg;
  crypto::random_bytes(ctx.server_guid);
  auto now = std::chrono::system_clock::now().time_since_epoch();
  ctx.start_time = vfs::unix_to_filetime(std::chrono::duration_cast<std::chrono::seconds>(now).count(), 0);
  ctx.negotiate_hint = auth::build_negotiate_hint(config::kerberos_keytab(cfg.global).has_value());
  ctx.max_read = cfg.global.smb2_max_read;
  ctx.max_write = cfg.global.smb2_max_write;
  ctx.max_trans = cfg.global.smb2_max_trans;
  ctx.lease_break_timeout_ms = cfg.global.lease_break_timeout_ms;
  ctx.ntacls.load_state(cfg.global.state_directory);
  const std::string sidecars = cfg.global.state_directory + "/streams";
  vfs::set_max_stream_bytes(cfg.global.max_stream_bytes);
  if (!vfs::configure_stream_sidecars(sidecars, {smb2::enter_server_identity, smb2::leave_server_identity},
                                      cfg.global.max_stream_space_per_user))
    LOG_WARN("named streams larger than one extended attribute value cannot be kept: %s is not a directory only "
             "ringsmbd can reach (%m)", sidecars.c_str());
  ctx.max_notify_watches = cfg.global.max_notify_watches;
  log_notify_limits(cfg.global.max_notify_watches);
}

// The descriptors this process holds now (/proc/self/fd, less the one
// reading it).
uint64_t open_descriptor_count() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  uint64_t n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n ? n - 1 : 0;
}

// The descriptor budget, once everything the daemon holds for itself is
// open and before any client is accepted: what it holds is not the
// clients'. (Counted, not estimated: it grows with workers and backends.)
void set_descriptor_budget(smb2::ServerContext& ctx) {
  struct rlimit rl {};
  getrlimit(RLIMIT_NOFILE, &rl);  // main() has raised the soft limit to the hard one
  uint64_t nofile = rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX : rl.rlim_cur;
  uint64_t own = open_descriptor_count();
  ctx.budget.set_descriptor_limit(nofile, own);
  LOG_INFO("descriptors: limit %llu, %llu held by the daemon, %u for clients", (unsigned long long)nofile,
            (unsigned long long)own, ctx.budget.usable_descriptors());
}

// Routes a task to the worker that owns the connection.
// Threads for blocking system calls (FLUSH's fsync, large WRITEs' pwrite).
// They wait for the disk or the kernel's dirty-page throttling, not the
// CPU; four let one connection's WRITEs go on while two others' fsyncs run,
// and what is beyond them queues without stalling any worker.
constexpr unsigned kBlockingThreads = 4;

// Routes a task to the worker that serves the connection now: the one of
// its address, or the bulk worker it moved to (ConnRoutes).
class WorkerPoster final : public smb2::ConnPoster {
 public:
  WorkerPoster(std::vector<std::unique_ptr<Worker>>& workers, const ConnRoutes& routes)
      : workers_(workers), routes_(routes) {}
  void post(const state::ConnAddress& to, smb2::ConnTask task) override {
    if (Worker* w = serving(to)) w->post(to.conn_id, std::move(task));
  }
  void post_at(const state::ConnAddress& to, int64_t due_ms, smb2::ConnTask task, smb2::Wanted wanted) override {
    if (Worker* w = serving(to)) w->post_at(to.conn_id, due_ms, std::move(task), std::move(wanted));
  }

 private:
  Worker* serving(const state::ConnAddress& to) const {
    if (Worker* moved = routes_.moved_to(to.conn_id)) return moved;
    return to.worker < workers_.size() ? workers_[to.worker].get() : nullptr;
  }
  std::vector<std::unique_ptr<Worker>>& workers_;
  const ConnRoutes& routes_;
};

// Re-reads shares and users for new logins and tree connects, and the log
// level. In-process: a new policy engine from the file. With ringsmb-ctld:
// the file is checked here first (so `ringsmbctl reload` reports a bad
// file), then ctld reloads. On success, the file's warnings (ctld or the
// in-process engine logs them).
std::expected<std::string, std::string> reload_control_plane(ipc::ControlPlane& control,
                                                             control::ReloadingControlPlane* local,
                                                             const std::string& config_path) {
  sd::notify("RELOADING=1");
  std::expected<std::string, std::string> r;
  auto parsed = config_path.empty() ? std::expected<config::ParseOutput, std::string>{}
                                    : config::parse_config_file(config_path);
  if (!parsed) {
    log_lines(LogLevel::Error, "reload: ", parsed.error());
    LOG_ERROR("reload: keeping the previous configuration");
    r = std::unexpected(parsed.error());
  } else {
    if (!config_path.empty()) apply_configured_log_level(parsed->config.global.log_level);
    for (const auto& w : parsed->warnings) *r += (r->empty() ? "" : "\n") + w;
    if (local) {
      if (auto lr = local->reload_config(); !lr) r = std::unexpected(lr.error());
    } else {
      control.reload();
    }
  }
  sd::notify(r ? "READY=1\nSTATUS=configuration reloaded" : "READY=1\nSTATUS=reload failed: bad configuration");
  return r;
}

std::unique_ptr<ipc::ControlPlane> make_control_plane(const config::Config& cfg, const ServerOptions& opts,
                                                      control::ReloadingControlPlane*& local) {
  local = nullptr;
  if (opts.use_ctld) return ipc::make_netlink_control_plane(cfg, opts.ctld);
  if (opts.config_path.empty()) return control::make_local_control_plane(cfg);
  auto r = control::make_reloading_local_control_plane(cfg, opts.config_path);
  local = r.get();
  return r;
}

std::string ready_status(const config::GlobalConfig& g, unsigned workers, const char* backend) {
  std::string ports;
  for (uint16_t p : g.tcp_ports) ports += (ports.empty() ? "" : ",") + std::to_string(p);
  return "STATUS=serving on port " + ports + " with " + std::to_string(workers) + " workers (" + backend + ")";
}

// Signals are taken by sigwait on the main thread; workers never see them.
sigset_t block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return set;
}

// Workers 0..n-1 listen; worker n+i is worker i's bulk worker (no
// listeners), where its connections that stream large WRITEs move.
bool make_workers(smb2::ServerContext& ctx, const config::Config& cfg, const ServerOptions& opts, unsigned n,
                  std::vector<std::unique_ptr<Worker>>& workers) {
  auto addrs = listen_addresses(cfg.global);
  for (unsigned i = 0; i < 2 * n; ++i) {
    auto w = std::make_unique<Worker>(int(i), ctx);
    std::string error;
    if (!w->init(i < n ? addrs : std::vector<ListenAddress>{}, opts.force_epoll, error)) {
      LOG_ERROR("%s", error.c_str());
      return false;
    }
    workers.push_back(std::move(w));
  }
  return true;
}

// "metrics listen" (off by default): /metrics over HTTP. A bad address
// costs the monitoring, not the file service.
void serve_metrics(MetricsHttp& metrics_http, const config::GlobalConfig& g, const std::vector<Worker*>& workers) {
  if (!g.metrics_port) return;
  std::string why;
  if (metrics_http.open(g.metrics_host, g.metrics_port, why)) {
    metrics_http.start(workers);
    LOG_INFO("serving /metrics on %s port %u", g.metrics_host.c_str(), unsigned(g.metrics_port));
  } else {
    LOG_WARN("%s; /metrics is not served", why.c_str());
  }
}

// Until SIGINT or SIGTERM; SIGHUP reloads.
void wait_for_shutdown(const sigset_t& set, const std::function<std::expected<std::string, std::string>()>& reload) {
  for (;;) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGHUP) {
      LOG_INFO("SIGHUP: reloading shares and users for new logins and tree connects");
      (void)reload();
      continue;
    }
    LOG_INFO("signal %d: shutting down", sig);
    return;
  }
}

}  // namespace

int run_server(const config::Config& cfg, const ServerOptions& opts) {
  sigset_t set = block_signals();
  smb2::install_commands();  // the dispatch table, before any worker runs
  auto ctx = std::make_unique<smb2::ServerContext>();
  init_context(*ctx, cfg);
  // The admin socket for ringsmbctl (a kernel-chosen port, published in ringsmbd.port).
  AdminEndpoint admin;
  if (std::string why; !admin.open(cfg.global.state_directory, why))
    LOG_WARN("%s; ringsmbctl status and session close will not work", why.c_str());
  sd::notify("STATUS=starting the control plane");
  control::ReloadingControlPlane* local = nullptr;
  auto control = make_control_plane(cfg, opts, local);
  if (!control) return 1;
  ctx->control = control.get();

  unsigned n = cfg.global.workers ? cfg.global.workers : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<Worker>> workers;
  if (!make_workers(*ctx, cfg, opts, n, workers)) return 1;
  ConnRoutes routes;
  for (unsigned i = 0; i < 2 * n; ++i) {
    workers[i]->set_routes(&routes, i < n ? workers[n + i].get() : nullptr);
    workers[i]->set_peers(&workers);
  }
  WorkerPoster poster(workers, routes);
  ctx->poster = &poster;
  ctx->blocking = std::make_unique<BlockingPool>(kBlockingThreads);
  set_descriptor_budget(*ctx);
  std::atomic<bool> stop{false};
  for (auto& w : workers) w->start(stop);
  LOG_INFO("ringsmbd: %u workers (%s) listening", n, workers[0]->backend_name());
  LOG_INFO("ringsmbd: the rest of a large frame is received %s",
           workers[0]->receives_in_place() ? "in place" : "through the reactor's buffers (no DEFER_TASKRUN)");
  auto reload = [&] { return reload_control_plane(*control, local, opts.config_path); };
  std::vector<Worker*> worker_ptrs;
  for (auto& w : workers) worker_ptrs.push_back(w.get());
  admin.start(worker_ptrs, {reload, [] { kill(getpid(), SIGTERM); }});
  MetricsHttp metrics_http;
  serve_metrics(metrics_http, cfg.global, worker_ptrs);
  // The listeners are bound and listening since Worker::init: clients that
  // connect from now on are accepted.
  sd::notify("READY=1\n" + ready_status(cfg.global, n, workers[0]->backend_name()));
  if (opts.on_ready) opts.on_ready();

  wait_for_shutdown(set, reload);
  sd::notify("STOPPING=1\nSTATUS=stopping");
  admin.stop();
  metrics_http.stop();
  stop = true;
  for (auto& w : workers) w->post([] {});  // a worker with no tick sleeps until an event
  for (auto& w : workers) w->join();
  ctx->blocking.reset();  // its last jobs may still post to the (stopped) workers
  ctx->poster = nullptr;
  workers.clear();
  smb2::close_kept_opens(*ctx);  // durable state does not outlive the process
  return 0;
}

}  // namespace ringsmb::transport
