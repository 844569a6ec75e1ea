// Test fixture for requests whose system call runs on the blocking pool
// (FLUSH, large WRITEs, truncations): the server has a pool and posts its
// completions through `poster`, which the test runs when it chooses; the
// connection has credits for the requests that follow.
#pragma once

#include <memory>

#include "common/blocking_pool.hpp"
#include "fixture.hpp"
#include "smb2/engine/processor.hpp"

namespace ringsmb::smb2::test {

struct PoolFixture : Smb2Fixture {
  QueuedPoster poster;
  PoolFixture(unsigned threads, uint64_t conn_id, uint16_t credits) {
    server.poster = &poster;
    server.blocking = std::make_unique<BlockingPool>(threads);
    conn.address = {0, conn_id};
    Bytes out;
    REQUIRE(process_frame(conn, server, request_frame(wire::Command::Echo, {4, 0, 0, 0}, 0, 1, credits), out) ==
            FrameResult::Ok);
  }
  ~PoolFixture() {
    server.blocking.reset();  // its jobs finish first: they post through `poster`
    server.poster = nullptr;
  }
};

}  // namespace ringsmb::smb2::test
