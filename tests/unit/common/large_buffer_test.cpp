// LargeBuffer: large frame buffers come back for the next frame instead
// of fresh pages, and an idle cache is emptied.
#include "common/large_buffer.hpp"

#include <time.h>

#include <catch2/catch.hpp>
#include <vector>

using ringsmb::LargeBuffer;

namespace {

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void empty_cache() { ringsmb::trim_large_buffers(now_ms() + ringsmb::kLargeBufferIdleMs + 1000); }

}  // namespace

TEST_CASE("a large buffer given back is the next one of its size", "[common]") {
  empty_cache();
  const size_t n = (8u << 20) + 116;  // an 8 MiB WRITE's frame
  uint8_t* first;
  {
    LargeBuffer b = LargeBuffer::allocate(n);
    REQUIRE(b);
    CHECK(b.capacity() >= n);
    first = b.get();
    b.get()[n - 1] = 7;  // all of it is usable
  }
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 1);
  LargeBuffer again = LargeBuffer::allocate(n);
  CHECK(again.get() == first);
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 0);
  // A much smaller frame does not take a buffer twice its size.
  {
    LargeBuffer big = std::move(again);
    CHECK_FALSE(again);
  }
  LargeBuffer small = LargeBuffer::allocate(LargeBuffer::kCachedFrom);
  CHECK(small.get() != first);
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 1);
  empty_cache();
}

TEST_CASE("a shared large buffer goes back to the cache when its last owner lets go", "[common]") {
  empty_cache();
  LargeBuffer b = LargeBuffer::allocate(1 << 20);
  uint8_t* p = b.get();
  std::shared_ptr<const void> kept = std::move(b).share();
  CHECK_FALSE(b);
  CHECK(kept.get() == p);
  std::shared_ptr<const void> second = kept;
  kept.reset();
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 0);
  second.reset();
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 1);
  CHECK(LargeBuffer::allocate(1 << 20).get() == p);
  empty_cache();
}

TEST_CASE("small buffers are not cached, and idle large ones are freed", "[common]") {
  empty_cache();
  { LargeBuffer s = LargeBuffer::allocate(4096); }
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 0);
  { LargeBuffer l = LargeBuffer::allocate(1 << 20); }
  CHECK(ringsmb::large_buffer_cache_stats().bytes >= (1u << 20));
  ringsmb::trim_large_buffers(now_ms());  // just given back: kept
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 1);
  ringsmb::trim_large_buffers(now_ms() + ringsmb::kLargeBufferIdleMs + 100);
  CHECK(ringsmb::large_buffer_cache_stats().buffers == 0);
  CHECK(ringsmb::large_buffer_cache_stats().bytes == 0);
}

TEST_CASE("the cache holds a bounded number of buffers", "[common]") {
  empty_cache();
  {
    std::vector<LargeBuffer> many;
    for (int i = 0; i < 20; ++i) many.push_back(LargeBuffer::allocate(1 << 20));
  }
  CHECK(ringsmb::large_buffer_cache_stats().buffers <= 8);
  empty_cache();
}
