// --local: the same file operations as the SMB workload, made directly on a
// directory with as many threads as connections. The limit of this machine
// for the workload, with no protocol in between.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "report.hpp"
#include "workload.hpp"

namespace ringsmb::smbench {
namespace {

using Clock = std::chrono::steady_clock;

uint32_t since_ns(Clock::time_point& t) {
  auto now = Clock::now();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  t = now;
  return uint32_t(std::min<int64_t>(ns, UINT32_MAX));
}

bool one_file(const Options& opt, int dirfd, uint64_t n, const Bytes& data, Stats& st) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%08llu.dat", opt.prefix.c_str(), (unsigned long long)n);
  auto t = Clock::now();
  int fd = ::openat(dirfd, name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  st.lat[kCreate].push_back(since_ns(t));
  bool ok = ::pwrite(fd, data.data(), data.size(), 0) == ssize_t(data.size());
  st.lat[kWrite].push_back(since_ns(t));
  timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ok = ok && ::futimens(fd, times) == 0;
  st.lat[kSetInfo].push_back(since_ns(t));
  ok = ::close(fd) == 0 && ok;
  st.lat[kClose].push_back(since_ns(t));
  st.files += ok;
  return ok;
}

}  // namespace

int run_local(const Options& opt) {
  int dirfd = ::open(opt.local_dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dirfd < 0) {
    std::fprintf(stderr, "smbench: %s: %s\n", opt.local_dir.c_str(), std::strerror(errno));
    return 1;
  }
  Bytes data(opt.size);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + 7);
  std::atomic<uint64_t> next{0};
  StartingLine line(opt.connections);
  std::mutex mu;
  Stats total;
  std::vector<std::thread> threads;
  for (int c = 0; c < opt.connections; ++c) {
    threads.emplace_back([&] {
      Stats st;
      line.wait_for_start();
      for (uint64_t n; (n = next.fetch_add(1)) < opt.files;) {
        if (!one_file(opt, dirfd, n, data, st)) std::perror("smbench: local file");
      }
      std::lock_guard lock(mu);
      total.merge(std::move(st));
    });
  }
  line.wait_until_ready();
  auto t0 = Clock::now();
  line.start();
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  ::close(dirfd);
  report_files(opt, total, secs);
  return total.files == opt.files ? 0 : 1;
}

}  // namespace ringsmb::smbench
