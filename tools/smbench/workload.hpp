// smbench's workloads: small-file writes over SMB (pipelined or compound),
// the same operations on a local directory, a large sequential file, and
// idle sessions for memory measurements.
#pragma once

#include <array>
#include <cstdint>
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
  std::string local_dir;
  bool local_uring = false;  // --local-io uring: open, write and close through io_uring
  uint64_t large = 0;
  std::string large_op = "both";  // write, read or both
  int idle = 0;
  uint64_t echo = 0;  // --echo N: N ECHO round trips, the per-request floor
  std::string prefix = "smbench";
  int server_pid = 0;  // --server-pid: report server CPU per file
};

enum Op { kCreate, kWrite, kSetInfo, kClose, kChain, kOpCount };
inline constexpr const char* kOpNames[kOpCount] = {"create", "write", "setinfo", "close", "compound"};

// Latencies in nanoseconds, per operation.
struct Stats {
  std::array<std::vector<uint32_t>, kOpCount> lat;
  uint64_t files = 0;
  double server_cpu_s = -1;  // measured with --server-pid, else negative
  double local_cpu_s = -1;   // --local: this process's CPU for the files
  void merge(Stats&& o);
};

// Each returns the process exit code and prints a human summary and one
// machine-readable "RESULT key=value ..." line.
int run_small_files(const Options& opt);
int run_local(const Options& opt);
int run_large(const Options& opt);
int run_idle(const Options& opt);
int run_echo(const Options& opt);

}  // namespace ringsmb::smbench
