// SET_INFO FileEndOfFileInformation / FileAllocationInformation that
// shrinks a large file runs its ftruncate on the blocking pool
// (smb2/commands/set_info.cpp, issue 14): the SET_INFO answers when it is done, and
// the connection's later requests wait for it (FrameResult::Hold), so they
// see the new size. A small file's, or one in a compound, stays inline.
// The same for a CREATE that overwrites a large file (smb2/commands/create.cpp).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "pool_fixture.hpp"
#include "smb2/leases/lease.hpp"
#include "vfs/file_info.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint8_t kEndOfFile = 20, kAllocation = 19;

Bytes set_size_body(FileId id, uint8_t cls, uint64_t size) {
  Body body;
  body.w.u16(33);
  body.w.u8(1);  // SMB2_0_INFO_FILE
  body.w.u8(cls);
  body.w.u32(8);
  body.w.u16(64 + 32);
  body.w.u16(0);
  body.w.u32(0);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u64(size);
  return body.b;
}

struct TruncateFixture : PoolFixture {
  uint64_t mid = 1;
  TruncateFixture() : PoolFixture(1, 9, 64) {}
  FrameResult send(wire::Command cmd, const Bytes& body, Bytes& out) {
    FrameResult r = process_frame(conn, server, request_frame(cmd, body, mid, 1), out);
    if (r != FrameResult::Hold) ++mid;
    return r;
  }
  FileId large_file(const std::string& name) {
    int fd = ::open((dir() / name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(fallocate(fd, 0, 0, off_t(2 * state::kLargeFileBytes)) == 0);
    ::close(fd);
    return open_file(name);
  }
  uint64_t size_of(const std::string& name) { return std::filesystem::file_size(dir() / name); }
  Bytes finish() {
    for (int i = 0; i < 5000 && poster.tasks.empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(poster.tasks.size() == 1);
    return poster.run_all(conn);
  }
};

}  // namespace

TEST_CASE("truncate off the worker: a large file's shrink answers when done; later requests wait",
          "[smb2][async][set_info]") {
  TruncateFixture fx;
  FileId f = fx.large_file("big");
  Bytes out;
  REQUIRE(fx.send(wire::Command::SetInfo, set_size_body(f, kEndOfFile, 4096), out) == FrameResult::Ok);
  CHECK(out.empty());  // the interim is held back
  CHECK(fx.conn.writes_in_flight == 1);
  // A READ of the open waits for the truncation.
  CHECK(fx.send(wire::Command::Read, read_body(f, 0, 8192), out) == FrameResult::Hold);
  Bytes done = fx.finish();
  wire::Header h = response_header(done);
  CHECK(h.command == wire::Command::SetInfo);
  CHECK(h.status == 0);
  CHECK_FALSE(h.is_async());
  CHECK(load_le16(done.data() + 4 + wire::kHeaderSize) == 2);
  CHECK(fx.conn.writes_in_flight == 0);
  CHECK(fx.size_of("big") == 4096);
  REQUIRE(fx.send(wire::Command::Read, read_body(f, 0, 8192), out) == FrameResult::Ok);
  CHECK(load_le32(out.data() + 4 + wire::kHeaderSize + 4) == 4096);  // DataLength: the new size
}

TEST_CASE("truncate off the worker: AllocationSize below EndOfFile too", "[smb2][async][set_info]") {
  TruncateFixture fx;
  FileId f = fx.large_file("alloc");
  Bytes out;
  REQUIRE(fx.send(wire::Command::SetInfo, set_size_body(f, kAllocation, 0), out) == FrameResult::Ok);
  CHECK(fx.conn.writes_in_flight == 1);
  CHECK(response_header(fx.finish()).status == 0);
  CHECK(fx.size_of("alloc") == 0);
}

TEST_CASE("truncate off the worker: a small file, a small shrink, and no pool stay inline",
          "[smb2][async][set_info]") {
  TruncateFixture fx;
  fx.write_file("small", std::string(100000, 'x'));
  FileId s = fx.open_file("small");
  Bytes out;
  REQUIRE(fx.send(wire::Command::SetInfo, set_size_body(s, kEndOfFile, 10), out) == FrameResult::Ok);
  CHECK(response_header(out).status == 0);
  CHECK(fx.conn.writes_in_flight == 0);
  CHECK(fx.size_of("small") == 10);

  FileId big = fx.large_file("big");
  out.clear();  // gives back less than kLargeFileBytes: inline
  REQUIRE(fx.send(wire::Command::SetInfo, set_size_body(big, kEndOfFile, 2 * state::kLargeFileBytes - 4096), out) ==
          FrameResult::Ok);
  CHECK(response_header(out).status == 0);
  CHECK(fx.conn.writes_in_flight == 0);

  fx.server.blocking.reset();
  out.clear();
  REQUIRE(fx.send(wire::Command::SetInfo, set_size_body(big, kEndOfFile, 0), out) == FrameResult::Ok);
  CHECK(response_header(out).status == 0);
  CHECK(fx.size_of("big") == 0);
}

TEST_CASE("truncate off the worker: a CREATE overwriting a large file answers when it is emptied",
          "[smb2][async][create]") {
  TruncateFixture fx;
  fx.large_file("big");  // another open of the file, sharing everything, stays
  struct stat before;
  REQUIRE(stat((fx.dir() / "big").c_str(), &before) == 0);
  Bytes out;
  REQUIRE(fx.send(wire::Command::Create, create_body("big", kOverwriteIf), out) == FrameResult::Ok);
  CHECK(out.empty());  // the interim is held back
  CHECK(fx.conn.writes_in_flight == 1);
  CHECK(fx.conn.tables->opens.size() == 2);  // registered: its share modes hold
  CHECK(fx.send(wire::Command::Echo, {4, 0, 0, 0}, out) == FrameResult::Hold);
  Bytes done = fx.finish();
  wire::Header h = response_header(done);
  CHECK(h.command == wire::Command::Create);
  CHECK(h.status == 0);
  CHECK_FALSE(h.is_async());
  const uint8_t* body = done.data() + 4 + wire::kHeaderSize;
  CHECK(load_le16(body) == 89);
  CHECK(load_le32(body + 4) == 3);  // FILE_OVERWRITTEN
  CHECK(load_le64(body + 40) == 0);  // AllocationSize
  CHECK(load_le64(body + 48) == 0);  // EndOfFile
  struct stat after;
  REQUIRE(stat((fx.dir() / "big").c_str(), &after) == 0);
  CHECK(after.st_size == 0);
  CHECK(after.st_ino == before.st_ino);
  CHECK(load_le64(body + 24) == vfs::stat_fd(fx.conn.tables->opens.begin()->second->fd.get())->last_write_time);
  CHECK(fx.conn.writes_in_flight == 0);
  FileId id{load_le64(body + 64), load_le64(body + 72)};
  REQUIRE(fx.conn.tables->opens.count(id.volatile_id));
  CHECK_FALSE(fx.conn.tables->opens.at(id.volatile_id)->large);
  REQUIRE(fx.send(wire::Command::Read, read_body(id, 0, 100), out) == FrameResult::Ok);
  CHECK(response_header(out).status == uint32_t(NtStatus::EndOfFile));
}

TEST_CASE("truncate off the worker: a CREATE overwriting a small file stays inline", "[smb2][async][create]") {
  TruncateFixture fx;
  fx.write_file("small", std::string(5000, 'x'));
  Bytes out;
  REQUIRE(fx.send(wire::Command::Create, create_body("small", kOverwriteIf), out) == FrameResult::Ok);
  CHECK(response_header(out).status == 0);
  CHECK(fx.conn.writes_in_flight == 0);
  CHECK(fx.size_of("small") == 0);
}

TEST_CASE("truncate off the worker: a break for the connection waits for the overwriting CREATE's response",
          "[smb2][async][create]") {
  // The client must know the FileId (and its oplock) before a break of it.
  TruncateFixture fx;
  int fd = ::open((fx.dir() / "big").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(fallocate(fd, 0, 0, off_t(2 * state::kLargeFileBytes)) == 0);
  ::close(fd);
  Bytes out;
  REQUIRE(fx.send(wire::Command::Create, create_body("big", kOverwriteIf, state::kOplockBatch), out) ==
          FrameResult::Ok);
  CHECK(out.empty());
  REQUIRE(fx.conn.overwrites_in_flight == 1);
  REQUIRE(fx.conn.tables->opens.size() == 1);
  const state::Open& open = *fx.conn.tables->opens.begin()->second;
  CHECK(open.oplock_level == state::kOplockBatch);
  state::BreakNotice b;
  b.to = fx.conn.address;
  b.is_oplock = true;
  b.to_state = state::kLeaseRead;
  b.persistent_id = open.persistent_id;
  b.volatile_id = open.volatile_id;
  write_break_notification(fx.conn, b, out);  // as another client's CREATE would have it sent
  CHECK(out.empty());
  CHECK(fx.conn.held_breaks.size() == 1);
  Bytes done = fx.finish();
  wire::Header create = response_header(done);
  CHECK(create.command == wire::Command::Create);
  CHECK(create.status == 0);
  CHECK(done[4 + wire::kHeaderSize + 2] == state::kOplockBatch);
  // The break follows the response.
  size_t next = 4 + (size_t(done[1]) << 16 | size_t(done[2]) << 8 | done[3]);
  REQUIRE(done.size() > next + 4);
  wire::Header brk = response_header(Bytes(done.begin() + next, done.end()));
  CHECK(brk.command == wire::Command::OplockBreak);
  CHECK(fx.conn.held_breaks.empty());
  CHECK(fx.conn.overwrites_in_flight == 0);
  CHECK(fx.size_of("big") == 0);
}
