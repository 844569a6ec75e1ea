// Sender CPU per READ reply of N bytes over loopback TCP, three ways:
//   copy+zero : vector grown with resize() (zero-filled), pread into it, send  (ringsmbd before)
//   copy      : pread into a buffer that is not zeroed first, send
//   sendfile  : fstat, dup, send the 84-byte header with MSG_MORE, sendfile, close  (ringsmbd now)
// A second thread receives and discards. The file (64 MiB) is in the page cache.
// Each cell is the median of 5 rounds that alternate the three ways.
// Built with the project (bench/CMakeLists.txt); run: build/bench/sendfile_bench
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

namespace {

constexpr size_t kFileSize = 64 << 20;
constexpr size_t kHeader = 84;  // 4-byte length + 64-byte SMB2 header + 16-byte READ body

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}
double process_cpu_s() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void send_all(int s, const uint8_t* p, size_t n, int flags) {
  while (n) {
    ssize_t k = send(s, p, n, flags | MSG_NOSIGNAL);
    if (k <= 0) exit(1);
    p += k;
    n -= size_t(k);
  }
}

enum class Way { CopyZeroed, Copy, Sendfile };
constexpr int kWays = 3;

void one_reply(Way way, int sock, int file, uint64_t off, size_t n, std::vector<uint8_t>& out, uint8_t* raw) {
  uint8_t header[kHeader] = {};
  if (way == Way::Sendfile) {
    struct stat st;
    fstat(file, &st);
    int fd = fcntl(file, F_DUPFD_CLOEXEC, 0);
    send_all(sock, header, kHeader, MSG_MORE);
    off_t o = off_t(off);
    size_t left = n;
    while (left) {
      ssize_t k = sendfile(sock, fd, &o, left);
      if (k <= 0) exit(1);
      left -= size_t(k);
    }
    close(fd);
    return;
  }
  uint8_t* dst;
  if (way == Way::CopyZeroed) {
    out.clear();
    out.resize(kHeader + n);  // zero-filled, as ringsmbd's reply buffer was
    std::copy(header, header + kHeader, out.data());
    dst = out.data() + kHeader;
  } else {
    std::copy(header, header + kHeader, raw);
    dst = raw + kHeader;
  }
  if (pread(file, dst, n, off_t(off)) != ssize_t(n)) exit(1);
  send_all(sock, way == Way::CopyZeroed ? out.data() : raw, kHeader + n, 0);
}

}  // namespace

int main() {
  char name[] = "/tmp/sendfile-bench-XXXXXX";
  int file = mkstemp(name);
  unlink(name);
  std::vector<uint8_t> junk(kFileSize, 0x5a);
  if (write(file, junk.data(), junk.size()) != ssize_t(junk.size())) return 1;

  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t al = sizeof a;
  getsockname(ls, reinterpret_cast<sockaddr*>(&a), &al);
  listen(ls, 1);
  int tx = socket(AF_INET, SOCK_STREAM, 0);
  connect(tx, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int rx = accept(ls, nullptr, nullptr);
  int one = 1;
  setsockopt(tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::thread reader([rx] {
    std::vector<uint8_t> buf(1 << 20);
    while (recv(rx, buf.data(), buf.size(), 0) > 0) {
    }
  });

  std::vector<uint8_t> out;
  auto raw = std::make_unique<uint8_t[]>(kHeader + (8 << 20));
  std::printf("sender CPU per reply, us (median of 5 interleaved rounds); process CPU s/GiB, both threads, in []\n");
  std::printf("%8s %12s %12s %12s\n", "bytes", "copy+zero", "copy", "sendfile");
  for (size_t n = 4096; n <= (8 << 20); n *= 2) {
    constexpr int kRounds = 5;
    double us[kWays][kRounds], gib[kWays][kRounds];
    size_t reps = std::max<size_t>((size_t(128) << 20) / n, 100);
    for (int round = 0; round < kRounds; ++round) {
      for (int w = 0; w < kWays; ++w) {
        uint64_t off = 0;
        for (size_t i = 0; i < 100; ++i) one_reply(Way(w), tx, file, 0, n, out, raw.get());  // warm up
        double t0 = thread_cpu_s(), p0 = process_cpu_s();
        for (size_t i = 0; i < reps; ++i) {
          one_reply(Way(w), tx, file, off, n, out, raw.get());
          off = (off + n) % (kFileSize - n);
        }
        us[w][round] = (thread_cpu_s() - t0) / double(reps) * 1e6;
        gib[w][round] = (process_cpu_s() - p0) / (double(reps * n) / double(1 << 30));
      }
    }
    for (int w = 0; w < kWays; ++w) {
      std::sort(us[w], us[w] + kRounds);
      std::sort(gib[w], gib[w] + kRounds);
    }
    std::printf("%8zu %12.2f %12.2f %12.2f   [%.3f %.3f %.3f]\n", n, us[0][2], us[1][2], us[2][2], gib[0][2],
                gib[1][2], gib[2][2]);
  }
  shutdown(tx, SHUT_WR);
  reader.join();
  return 0;
}
