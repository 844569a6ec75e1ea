#include "report.hpp"

#include <algorithm>
#include <cstdio>

namespace ringsmb::smbench {
namespace {

// Nearest-rank percentile in microseconds; sorts in place.
double percentile_us(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, size_t(p / 100.0 * double(v.size())));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k] / 1000.0;
}

}  // namespace

void Stats::merge(Stats&& o) {
  files += o.files;
  errors += o.errors;
  for (int i = 0; i < kOpCount; ++i) lat[i].insert(lat[i].end(), o.lat[i].begin(), o.lat[i].end());
}

void report_result(const std::vector<std::pair<std::string, double>>& kv) {
  std::printf("RESULT");
  for (auto& [k, v] : kv) std::printf(" %s=%.6g", k.c_str(), v);
  std::printf("\n");
  std::fflush(stdout);
}

void report_files(const Options& opt, Stats& stats, double seconds) {
  double fps = seconds > 0 ? double(stats.files) / seconds : 0;
  double mbs = fps * double(opt.size) / 1e6;
  std::printf("%s: %llu files of %zu bytes, %d connections x %d in flight%s: %.2f s, %.0f files/s, %.2f MB/s\n",
              opt.local_dir.empty() ? "smb" : "local", (unsigned long long)stats.files, opt.size, opt.connections,
              opt.depth, opt.compound ? ", compound" : "", seconds, fps, mbs);
  std::vector<std::pair<std::string, double>> kv = {
      {"files", double(stats.files)}, {"errors", double(stats.errors)}, {"wall_s", seconds}, {"files_s", fps},
      {"mb_s", mbs}};
  if (stats.dialect) {
    kv.emplace_back("dialect", stats.dialect);
    kv.emplace_back("signing_alg", stats.signing_alg);
    kv.emplace_back("encrypted", stats.encrypted);
  }
  if (stats.errors) std::printf("  %llu requests failed\n", (unsigned long long)stats.errors);
  if (stats.server_cpu_s >= 0 && stats.files) {
    double per_file = stats.server_cpu_s / double(stats.files) * 1e6;
    std::printf("  server CPU %.2f s, %.0f us per file\n", stats.server_cpu_s, per_file);
    kv.emplace_back("server_cpu_s", stats.server_cpu_s);
    kv.emplace_back("server_cpu_us_per_file", per_file);
  }
  if (stats.local_cpu_s >= 0 && stats.files) {
    double per_file = stats.local_cpu_s / double(stats.files) * 1e6;
    std::printf("  CPU %.3f s, %.1f us per file (%s)\n", stats.local_cpu_s, per_file,
                opt.local_uring ? "io_uring" : "syscalls");
    kv.emplace_back("cpu_us_per_file", per_file);
  }
  // Every request's latency (a compound chain counts as one request): what
  // a client waiting on the server sees, whatever the operation.
  std::vector<uint32_t> all;
  for (auto& v : stats.lat) all.insert(all.end(), v.begin(), v.end());
  if (!all.empty()) {
    double p50 = percentile_us(all, 50), p99 = percentile_us(all, 99);
    std::printf("  %-9s p50 %8.1f us   p99 %8.1f us   (%zu)\n", "request", p50, p99, all.size());
    kv.emplace_back("p50_request_us", p50);
    kv.emplace_back("p99_request_us", p99);
  }
  for (int op = 0; op < kOpCount; ++op) {
    auto& v = stats.lat[op];
    if (v.empty()) continue;
    double p50 = percentile_us(v, 50), p99 = percentile_us(v, 99);
    std::printf("  %-9s p50 %8.1f us   p99 %8.1f us   (%zu)\n", kOpNames[op], p50, p99, v.size());
    kv.emplace_back(std::string("p50_") + kOpNames[op] + "_us", p50);
    kv.emplace_back(std::string("p99_") + kOpNames[op] + "_us", p99);
  }
  report_result(kv);
}

}  // namespace ringsmb::smbench
