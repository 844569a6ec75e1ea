// --echo N: ECHO requests one at a time, the way smbclient -Tx waits for
// each reply. An ECHO does no file work, so the server CPU it costs is the
// floor under every request: receive, dispatch, reply over loopback TCP, and
// the two context switches of a worker that sleeps between requests.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "report.hpp"
#include "server_cpu.hpp"
#include "workload.hpp"

namespace ringsmb::smbench {

int run_echo(const Options& opt) {
  using Clock = std::chrono::steady_clock;
  Connection conn;
  conn.open(opt.client);
  std::vector<uint32_t> rtt_ns;
  rtt_ns.reserve(opt.echo);
  double cpu0 = tree_cpu_seconds(opt.server_pid);
  auto start = Clock::now();
  for (uint64_t i = 0; i < opt.echo; ++i) {
    auto t0 = Clock::now();
    Response r = conn.call(echo_request());
    if (r.status() != 0) throw std::runtime_error("ECHO: " + status_text(r.status()));
    rtt_ns.push_back(uint32_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count()));
  }
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = opt.server_pid ? tree_cpu_seconds(opt.server_pid) - cpu0 : -1;
  std::sort(rtt_ns.begin(), rtt_ns.end());
  double p50_us = rtt_ns[rtt_ns.size() / 2] / 1e3;
  std::printf("echo: %llu round trips in %.2f s, p50 %.1f us", (unsigned long long)opt.echo, wall, p50_us);
  std::vector<std::pair<std::string, double>> kv{{"requests", double(opt.echo)}, {"wall_s", wall}, {"p50_us", p50_us}};
  if (cpu >= 0) {
    std::printf(", server CPU %.1f us per request", cpu / double(opt.echo) * 1e6);
    kv.emplace_back("server_cpu_us_per_request", cpu / double(opt.echo) * 1e6);
  }
  std::printf("\n");
  report_result(kv);
  return 0;
}

}  // namespace ringsmb::smbench
