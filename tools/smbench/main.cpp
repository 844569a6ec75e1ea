// smbench: a load generator for SMB2 servers, built on ringsmb's own wire,
// crypto and auth code. See bench/run and docs/PERFORMANCE.md.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "workload.hpp"

namespace ringsmb::smbench {
namespace {

constexpr const char* kUsage = R"(usage: smbench [options]
  --host ADDR --port N --user U --password P [--domain D] --share NAME
  --connections C     connections (threads with --local)       [1]
  --depth D           requests (files) in flight per connection [1]
  --files N           files to write in all                     [1000]
  --size BYTES        bytes per file                            [4096]
  --compound          CREATE+WRITE+SET_INFO+CLOSE as one related compound
  --no-lease          CREATE without a lease request
  --profile basic|windows  per file CREATE(lease)+WRITE+SET_INFO+CLOSE, or what
                      Windows Explorer sends: CREATE (RqLs v2, DH2Q, MxAc,
                      QFid) + SET_INFO end-of-file + WRITE + SET_INFO basic
                      + CLOSE                                    [basic]
  --dialect 2.1|3.1.1 offer only this dialect (default: both)
  --sign              sign every request even if the server does not require it
                      (3.1.1: AES-GMAC when the server offers it, else AES-CMAC)
  --encrypt           encrypt every request after SESSION_SETUP (3.x;
                      AES-128-GCM on 3.1.1 when the server offers it)
  --prefix NAME       file name prefix                          [smbench]
  --server-pid PID    also report the CPU of PID's process tree (a local server) per file
  --local DIR         the same operations on DIR through the kernel, no SMB
  --local-io inline|uring  with --local: plain syscalls, or openat/write/close
                      through one io_uring per thread (futimens stays a
                      syscall: io_uring has no such operation)     [inline]
  --large BYTES       write then read one file sequentially (1 MiB requests)
  --large-op write|read|both                                    [both]
  --flush             with --large: FLUSH the file after writing it (fsync)
  --repeat N          with --large: do it all N times           [1]
  --channels N        with --large: bind N-1 more connections to the session
                      (multichannel, SMB 3.x) and move the file's chunks over
                      all N, --depth requests in flight on each; every
                      request is then signed                     [1]
  --idle-connections N  open N sessions, print READY, hold them until stdin closes
  --echo N            N ECHO round trips on one connection: what a request
                      costs the server before any file work (with --server-pid)
Prints a summary and one line "RESULT key=value ..." for scripts.
)";

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "smbench: %s\n%s", why, kUsage);
  std::exit(2);
}

uint64_t number(const char* s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (!*s || *end) usage((std::string("not a number: ") + s).c_str());
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--host") o.client.host = val();
    else if (a == "--port") o.client.port = uint16_t(number(val()));
    else if (a == "--user") o.client.user = val();
    else if (a == "--password") o.client.password = val();
    else if (a == "--domain") o.client.domain = val();
    else if (a == "--share") o.client.share = val();
    else if (a == "--connections") o.connections = int(number(val()));
    else if (a == "--depth") o.depth = int(number(val()));
    else if (a == "--files") o.files = number(val());
    else if (a == "--size") o.size = number(val());
    else if (a == "--compound") o.compound = true;
    else if (a == "--no-lease") o.lease = false;
    else if (a == "--sign") o.client.force_signing = true;
    else if (a == "--encrypt") o.client.encrypt = true;
    else if (a == "--profile") {
      std::string p = val();
      if (p != "basic" && p != "windows") usage("--profile takes basic or windows");
      o.windows_profile = p == "windows";
    }
    else if (a == "--prefix") o.prefix = val();
    else if (a == "--server-pid") o.server_pid = int(number(val()));
    else if (a == "--local") o.local_dir = val();
    else if (a == "--local-io") {
      std::string io = val();
      if (io != "inline" && io != "uring") usage("--local-io takes inline or uring");
      o.local_uring = io == "uring";
    }
    else if (a == "--large") o.large = number(val());
    else if (a == "--large-op") o.large_op = val();
    else if (a == "--flush") o.large_flush = true;
    else if (a == "--repeat") o.large_repeat = number(val());
    else if (a == "--channels") o.channels = int(number(val()));
    else if (a == "--idle-connections") o.idle = int(number(val()));
    else if (a == "--echo") o.echo = number(val());
    else if (a == "--dialect") {
      std::string d = val();
      if (d == "2.1") o.client.dialects = {0x0210};
      else if (d == "3.1.1") o.client.dialects = {0x0311};
      else usage("--dialect is 2.1 or 3.1.1");
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else usage(("unknown option " + a).c_str());
  }
  if (o.connections < 1 || o.depth < 1) usage("--connections and --depth must be at least 1");
  if (o.channels < 1 || o.channels > 32) usage("--channels is 1..32");
  if (o.local_dir.empty() && o.client.share.empty()) usage("--share (or --local DIR) is required");
  return o;
}

// Each connection is a socket; 1,000 idle sessions need more than 1,024 fds.
void raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace
}  // namespace ringsmb::smbench

int main(int argc, char** argv) {
  using namespace ringsmb::smbench;
  Options opt = parse(argc, argv);
  raise_fd_limit();
  try {
    if (!opt.local_dir.empty()) return run_local(opt);
    if (opt.idle) return run_idle(opt);
    if (opt.echo) return run_echo(opt);
    if (opt.large) return run_large(opt);
    return run_small_files(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smbench: %s\n", e.what());
    return 1;
  }
}
