// smbench's workloads: small-file writes over SMB (pipelined or compound),
// the same operations on a local directory, a large sequential file, and
// idle sessions for memory measurements.
#pragma once

#include <array>
#include <cstdint>
#include <latch>
#include <string>
#include <vector>

#include "client.hpp"

namespace ringsmb::smbench {

struct Options {
  ClientOptions client;
  int connections = 1;
  int depth = 1;
  uint64_t files = 1000;
  size_t size = 4096;
  bool compound = false;
  bool lease = true;
  // basic: CREATE (lease) -> WRITE -> SET_INFO basic -> CLOSE; windows: what
  // Windows 10/11 Explorer sends per copied file (small_files.cpp).
  bool windows_profile = false;
  std::string local_dir;
  bool local_uring = false;  // --local-io uring: open, write and close through io_uring
  uint64_t large = 0;
  std::string large_op = "both";  // write, read or both
  bool large_flush = false;        // --flush: FLUSH after writing the large file
  uint64_t large_repeat = 1;       // --repeat: the large operations this many times
  int channels = 1;                // --channels: the large file over this many bound connections (multichannel)
  int idle = 0;
  uint64_t echo = 0;  // --echo N: N ECHO round trips, the per-request floor
  std::string prefix = "smbench";
  int server_pid = 0;  // --server-pid: report server CPU per file
};

enum Op { kCreate, kSetEof, kWrite, kSetInfo, kClose, kChain, kOpCount };
inline constexpr const char* kOpNames[kOpCount] = {"create", "seteof", "write", "setinfo", "close", "compound"};

// Latencies in nanoseconds, per operation.
struct Stats {
  std::array<std::vector<uint32_t>, kOpCount> lat;
  uint64_t files = 0;
  uint64_t errors = 0;  // responses with an error status
  // What the first connection negotiated: dialect, signing algorithm (-1:
  // not signing; else MS-SMB2's id: 0 HMAC-SHA256, 1 AES-CMAC, 2 AES-GMAC),
  // encryption.
  int dialect = 0, signing_alg = -1;
  bool encrypted = false;
  double server_cpu_s = -1;  // measured with --server-pid, else negative
  double local_cpu_s = -1;   // --local: this process's CPU for the files
  void merge(Stats&& o);
};

// Lets the threads of a measurement start together, after the clock has
// been read: each thread calls wait_for_start() once it is set up; the main
// thread calls wait_until_ready(), reads the clock, then start(). Reading
// the clock after releasing the threads let a short run finish before the
// clock was read (400 local files "in" 0.1 ms: millions of files/s).
class StartingLine {
 public:
  explicit StartingLine(int threads) : ready_(threads), go_(1) {}
  void wait_for_start() {
    ready_.count_down();
    go_.wait();
  }
  void wait_until_ready() { ready_.wait(); }
  void start() { go_.count_down(); }

 private:
  std::latch ready_;
  std::latch go_;
};

// Each returns the process exit code and prints a human summary and one
// machine-readable "RESULT key=value ..." line.
int run_small_files(const Options& opt);
int run_local(const Options& opt);
int run_large(const Options& opt);
int run_idle(const Options& opt);
int run_echo(const Options& opt);

}  // namespace ringsmb::smbench
