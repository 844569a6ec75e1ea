// --local: the same file operations as the SMB workload, made directly on a
// directory with as many threads as connections. The limit of this machine
// for the workload, with no protocol in between. --local-io uring makes the
// same calls through io_uring (one ring per thread, one operation in flight
// as a server handling one request has), which answers the design question
// "inline syscalls or io_uring for create, write and close?" on this machine.
#include <fcntl.h>
#include <liburing.h>
#include <sys/resource.h>
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

// The file operations, as plain syscalls or through an io_uring.
class FileIo {
 public:
  explicit FileIo(bool uring) : uring_(uring) {
    if (uring_ && io_uring_queue_init(8, &ring_, 0) != 0) uring_ = false;
  }
  ~FileIo() {
    if (uring_) io_uring_queue_exit(&ring_);
  }
  FileIo(const FileIo&) = delete;
  FileIo& operator=(const FileIo&) = delete;
  bool uring() const { return uring_; }

  int open_create(int dirfd, const char* name) {
    if (!uring_) return ::openat(dirfd, name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    io_uring_prep_openat(sqe(), dirfd, name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    return result();
  }
  ssize_t write(int fd, const Bytes& data) {
    if (!uring_) return ::pwrite(fd, data.data(), data.size(), 0);
    io_uring_prep_write(sqe(), fd, data.data(), unsigned(data.size()), 0);
    return result();
  }
  int close(int fd) {
    if (!uring_) return ::close(fd);
    io_uring_prep_close(sqe(), fd);
    return result();
  }

 private:
  io_uring_sqe* sqe() { return io_uring_get_sqe(&ring_); }  // one in flight: never full
  // Submits the one prepared operation and waits for it: -errno as -1.
  int result() {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_submit_and_wait(&ring_, 1) < 0 || io_uring_wait_cqe(&ring_, &cqe) != 0) return -1;
    int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (res < 0) {
      errno = -res;
      return -1;
    }
    return res;
  }

  bool uring_;
  io_uring ring_{};
};

bool one_file(const Options& opt, FileIo& io, int dirfd, uint64_t n, const Bytes& data, Stats& st) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%08llu.dat", opt.prefix.c_str(), (unsigned long long)n);
  auto t = Clock::now();
  int fd = io.open_create(dirfd, name);
  if (fd < 0) return false;
  st.lat[kCreate].push_back(since_ns(t));
  bool ok = io.write(fd, data) == ssize_t(data.size());
  st.lat[kWrite].push_back(since_ns(t));
  timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ok = ok && ::futimens(fd, times) == 0;
  st.lat[kSetInfo].push_back(since_ns(t));
  ok = io.close(fd) == 0 && ok;
  st.lat[kClose].push_back(since_ns(t));
  st.files += ok;
  return ok;
}

// User + system CPU of this process, every thread (io_uring's io-wq
// workers are threads of the process and count too).
double process_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

}  // namespace

int run_local(const Options& opt) {
  int dirfd = ::open(opt.local_dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dirfd < 0) {
    std::fprintf(stderr, "smbench: %s: %s\n", opt.local_dir.c_str(), std::strerror(errno));
    return 1;
  }
  Bytes data(opt.size, 0);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + 7);
  std::atomic<uint64_t> next{0};
  StartingLine line(opt.connections);
  std::mutex mu;
  Stats total;
  std::vector<std::thread> threads;
  for (int c = 0; c < opt.connections; ++c) {
    threads.emplace_back([&] {
      Stats st;
      FileIo io(opt.local_uring);
      if (opt.local_uring && !io.uring()) std::fprintf(stderr, "smbench: io_uring unavailable; using syscalls\n");
      line.wait_for_start();
      for (uint64_t n; (n = next.fetch_add(1)) < opt.files;) {
        if (!one_file(opt, io, dirfd, n, data, st)) std::perror("smbench: local file");
      }
      std::lock_guard lock(mu);
      total.merge(std::move(st));
    });
  }
  line.wait_until_ready();
  auto t0 = Clock::now();
  double cpu0 = process_cpu_s();
  line.start();
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  total.local_cpu_s = process_cpu_s() - cpu0;
  ::close(dirfd);
  report_files(opt, total, secs);
  return total.files == opt.files ? 0 : 1;
}

}  // namespace ringsmb::smbench
