// Round trips of one byte over two pipes between two processes (fork) or
// two threads of one process: the same system calls and wake-ups, with and
// without a change of address space at each hop. On hardware the two cost
// about the same; under QEMU's TCG an address-space change is emulated at
// several times the price, which is what separates a user-space server
// (a switch from the client's process to the server's and back per
// request) from an in-kernel one in docs/PERFORMANCE.md's guest rows.
// Built with the project (bench/CMakeLists.txt); static, so that it runs
// in the tests/vm guest as it is:
//   build/bench/switch_cost processes|threads [ROUND_TRIPS]
//   tests/vm/run --kernel 6.12 --file build/bench/switch_cost --
//     'taskset 1 ./switch_cost processes; taskset 1 ./switch_cost threads'
// (one line; --icount 2 before --kernel to count instructions instead)
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

int to_echo[2], from_echo[2];

void echo(long round_trips) {
  char c;
  for (long i = 0; i < round_trips; i++)
    if (read(to_echo[0], &c, 1) != 1 || write(from_echo[1], &c, 1) != 1) _exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const bool threads = argc > 1 && std::strcmp(argv[1], "threads") == 0;
  const long round_trips = argc > 2 ? std::atol(argv[2]) : 20000;
  if (argc < 2 || round_trips <= 0 || pipe(to_echo) != 0 || pipe(from_echo) != 0) {
    std::fprintf(stderr, "usage: switch_cost processes|threads [ROUND_TRIPS]\n");
    return 2;
  }
  std::thread peer;
  pid_t child = 0;
  if (threads) {
    peer = std::thread(echo, round_trips);
  } else if ((child = fork()) == 0) {
    echo(round_trips);
    _exit(0);
  }
  char c = 'x';
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < round_trips; i++)
    if (write(to_echo[1], &c, 1) != 1 || read(from_echo[0], &c, 1) != 1) return 1;
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  if (threads) peer.join(); else waitpid(child, nullptr, 0);
  std::printf("%s: %.2f us per round trip\n", threads ? "threads" : "processes", took.count() / round_trips);
  return 0;
}
