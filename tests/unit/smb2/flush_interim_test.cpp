// FLUSH on the blocking pool with a deferred interim response
// (smb2/commands/flush.cpp, async_engine defer_interim()): an fsync finished before
// the deadline is answered once, as an ordinary synchronous response; one
// still running at the deadline gets the interim STATUS_PENDING with the
// credits, and its final response carries none.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "pool_fixture.hpp"
#include "smb2/engine/processor.hpp"
#include "vfs/file_info.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

Bytes flush_body(FileId id) {
  Body body;
  body.w.u16(24);
  body.w.u16(0);
  body.w.u32(0);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  return body.b;
}

struct FlushFixture : PoolFixture {
  FlushFixture() : PoolFixture(1, 5, 32) {}
  // Sends a FLUSH of a new file alone in its frame: nothing goes out yet.
  void flush_alone(uint64_t mid) {
    FileId f = open_file("f" + std::to_string(mid));
    Bytes out;
    REQUIRE(process_frame(conn, server, request_frame(wire::Command::Flush, flush_body(f), mid, 1), out) ==
            FrameResult::Ok);
    CHECK(out.empty());  // the interim is held back
    REQUIRE(poster.timed.size() == 1);
  }
  // Waits for the fsync's completion to be posted.
  void wait_for_fsync() {
    for (int i = 0; i < 5000 && poster.tasks.empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(!poster.tasks.empty());
  }
};

}  // namespace

TEST_CASE("flush: an fsync done before the deadline gets one synchronous response", "[smb2][async][flush]") {
  FlushFixture fx;
  fx.flush_alone(1);
  fx.wait_for_fsync();
  Bytes done = fx.poster.run_all(fx.conn);
  wire::Header h = response_header(done);
  CHECK(h.command == wire::Command::Flush);
  CHECK(h.status == 0);
  CHECK_FALSE(h.is_async());
  CHECK(h.message_id == 1);
  CHECK(h.tree_id == 1);
  CHECK(h.credits >= 1);  // the only response grants the credits
  // Its timer is told: at the deadline it posts nothing to the worker.
  REQUIRE(fx.poster.timed_wanted.size() == 1);
  REQUIRE(fx.poster.timed_wanted[0]);
  CHECK_FALSE(*fx.poster.timed_wanted[0]);
  CHECK(fx.poster.run_timed(fx.conn).empty());  // the deadline finds it answered
  CHECK(fx.conn.async.waiting.empty());
}

TEST_CASE("flush: at the deadline the interim goes out with the credits, the final without", "[smb2][async][flush]") {
  FlushFixture fx;
  fx.flush_alone(2);
  Bytes interim_frame = fx.poster.run_timed(fx.conn);  // the deadline passes before the completion runs
  wire::Header interim = response_header(interim_frame);
  CHECK(interim.status == uint32_t(NtStatus::Pending));
  CHECK(interim.is_async());
  CHECK(interim.async_id != 0);
  CHECK(interim.message_id == 2);
  CHECK(interim.credits >= 1);
  fx.wait_for_fsync();
  wire::Header final_h = response_header(fx.poster.run_all(fx.conn));
  CHECK(final_h.status == 0);
  CHECK(final_h.is_async());
  CHECK(final_h.async_id == interim.async_id);
  CHECK(final_h.credits == 0);
}

TEST_CASE("flush: inside a compound the interim goes out with the chain", "[smb2][async][flush]") {
  FlushFixture fx;
  FileId f = fx.open_file("f");
  // ECHO, then FLUSH as the chain's last element.
  Bytes chain = request_frame(wire::Command::Echo, {4, 0, 0, 0, 0, 0, 0, 0}, 3, 1);
  store_le32(chain.data() + wire::hdr::NextCommand, uint32_t(chain.size()));
  Bytes flush = request_frame(wire::Command::Flush, flush_body(f), 4, 1);
  chain.insert(chain.end(), flush.begin(), flush.end());
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain, out) == FrameResult::Ok);
  REQUIRE(out.size() > 4 + 2 * wire::kHeaderSize);
  wire::Header flush_interim{};
  uint32_t next = load_le32(out.data() + 4 + wire::hdr::NextCommand);
  REQUIRE(wire::parse_header(ByteSpan(out).subspan(4 + next), flush_interim));
  CHECK(flush_interim.command == wire::Command::Flush);
  CHECK(flush_interim.status == uint32_t(NtStatus::Pending));
  CHECK(fx.poster.run_timed(fx.conn).empty());  // nothing held back
  fx.wait_for_fsync();
  wire::Header final_h = response_header(fx.poster.run_all(fx.conn));
  CHECK(final_h.is_async());
  CHECK(final_h.credits == 0);
}

TEST_CASE("flush: on a filesystem in memory the fsync runs inline, with no pool job", "[smb2][async][flush]") {
  FlushFixture fx;
  auto root = vfs::stat_fd(fx.tree->root.get());
  REQUIRE(root);
  fx.tree->memory_fs_device = root->device;  // as if the share were on tmpfs
  FileId f = fx.open_file("inline");
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(wire::Command::Flush, flush_body(f), 5, 1), out) ==
          FrameResult::Ok);
  wire::Header h = response_header(out);
  CHECK(h.command == wire::Command::Flush);
  CHECK(h.status == 0);
  CHECK_FALSE(h.is_async());
  CHECK(fx.poster.timed.empty());  // no interim held back: nothing waits
  CHECK(fx.poster.tasks.empty());
  CHECK(fx.conn.async.waiting.empty());
}
