// A large file's descriptor is closed on the blocking pool (smb2/commands/close.cpp,
// issue 14): the close of an unlinked large file frees its blocks, which
// takes milliseconds. The descriptor stays open, and counted against the
// descriptor budget, until the pool closes it; a small file's closes inline,
// as does everything without a pool.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "common/blocking_pool.hpp"
#include "fixture.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kDelete = 0x00010000;

bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

struct CloseFixture : Smb2Fixture {
  std::promise<void> gate;
  CloseFixture() {
    server.blocking = std::make_unique<BlockingPool>(1);
    // The pool's one thread waits here: what is submitted stays queued.
    server.blocking->submit([f = gate.get_future().share()] { f.wait(); });
  }
  ~CloseFixture() {
    open_gate();
    server.blocking.reset();
  }
  void open_gate() {
    if (!gated) return;
    gated = false;
    gate.set_value();
  }
  // Runs the queued jobs: a job behind them signals when they are done.
  void drain() {
    open_gate();
    std::promise<void> done;
    server.blocking->submit([&done] { done.set_value(); });
    done.get_future().wait();
  }
  void make_large(const std::string& rel) {
    int fd = ::open((dir() / rel).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(fallocate(fd, 0, 0, off_t(state::kLargeFileBytes)) == 0);
    ::close(fd);
  }
  int fd_of(FileId id) { return conn.tables->opens.at(id.volatile_id)->fd.get(); }
  bool gated = true;
};

}  // namespace

TEST_CASE_METHOD(CloseFixture, "a small file's descriptor closes inline", "[smb2][close]") {
  write_file("small", "data");
  FileId f = open_file("small");
  int fd = fd_of(f);
  CHECK_FALSE(conn.tables->opens.at(f.volatile_id)->large);
  CHECK(server.budget.open_files.load() == 1);
  close(f);
  CHECK_FALSE(fd_open(fd));
  CHECK(server.budget.open_files.load() == 0);
}

TEST_CASE_METHOD(CloseFixture, "a large file's descriptor closes on the pool, counted until then", "[smb2][close]") {
  make_large("big");
  FileId f = open_file("big");
  int fd = fd_of(f);
  CHECK(conn.tables->opens.at(f.volatile_id)->large);
  close(f);
  CHECK(conn.tables->opens.empty());
  CHECK(fd_open(fd));  // still ours: no other open can be given its number
  CHECK(server.budget.open_files.load() == 1);
  drain();
  CHECK_FALSE(fd_open(fd));
  CHECK(server.budget.open_files.load() == 0);
}

TEST_CASE_METHOD(CloseFixture, "a write past the threshold makes the file large", "[smb2][close]") {
  FileId f = open_file("grown");
  CHECK_FALSE(conn.tables->opens.at(f.volatile_id)->large);
  conn.tables->opens.at(f.volatile_id)->note_end(state::kLargeFileBytes - 1);
  CHECK_FALSE(conn.tables->opens.at(f.volatile_id)->large);
  conn.tables->opens.at(f.volatile_id)->note_end(state::kLargeFileBytes);
  CHECK(conn.tables->opens.at(f.volatile_id)->large);
}

TEST_CASE_METHOD(CloseFixture, "delete on close of a large file: unlinked first, its blocks freed on the pool",
                 "[smb2][close]") {
  // Small when opened: the delete asks the kernel how large it is now.
  write_file("doomed", "x");
  FileId f = open_file("doomed", FILE_ALL_ACCESS | kDelete, kOpenIf, kNonDirectoryFile | kDeleteOnClose);
  CHECK_FALSE(conn.tables->opens.at(f.volatile_id)->large);
  int fd = fd_of(f);
  REQUIRE(fallocate(fd, 0, 0, off_t(state::kLargeFileBytes)) == 0);
  close(f);
  CHECK_FALSE(exists("doomed"));
  REQUIRE(fd_open(fd));
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  CHECK(st.st_nlink == 0);  // the pool's close frees the blocks
  drain();
  CHECK_FALSE(fd_open(fd));
  CHECK(server.budget.open_files.load() == 0);
}

TEST_CASE_METHOD(CloseFixture, "delete on close of a small file closes inline", "[smb2][close]") {
  write_file("gone", "x");
  FileId f = open_file("gone", FILE_ALL_ACCESS | kDelete, kOpenIf, kNonDirectoryFile | kDeleteOnClose);
  int fd = fd_of(f);
  close(f);
  CHECK_FALSE(exists("gone"));
  CHECK_FALSE(fd_open(fd));
}

TEST_CASE_METHOD(Smb2Fixture, "without a pool a large file's descriptor closes inline", "[smb2][close]") {
  int w = ::open((dir() / "big").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(w >= 0);
  REQUIRE(fallocate(w, 0, 0, off_t(state::kLargeFileBytes)) == 0);
  ::close(w);
  FileId f = open_file("big");
  int fd = conn.tables->opens.at(f.volatile_id)->fd.get();
  CHECK(conn.tables->opens.at(f.volatile_id)->large);
  close(f);
  CHECK_FALSE(fd_open(fd));
  CHECK(server.budget.open_files.load() == 0);
}
