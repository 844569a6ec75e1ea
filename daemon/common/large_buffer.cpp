#include "common/large_buffer.hpp"

#include <time.h>

#include <mutex>
#include <utility>
#include <vector>

namespace ringsmb {
namespace {

// Enough for a few connections' 8 MiB WRITEs in flight; beyond, freed.
constexpr size_t kMaxCachedBuffers = 8;
constexpr size_t kMaxCachedBytes = 48u << 20;
// Sizes are rounded up so that frames of one workload (8 MiB of data plus
// headers) fit each other's buffers.
constexpr size_t kGranule = 64 * 1024;

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct Cached {
  uint8_t* data;
  size_t capacity;
  int64_t since_ms;  // when it was given back
};

struct Cache {
  std::mutex mu;
  std::vector<Cached> free;  // newest last
  size_t bytes = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: buffers may come back during exit
  return *c;
}

void give_back(uint8_t* data, size_t capacity) {
  Cache& c = cache();
  {
    std::lock_guard lock(c.mu);
    if (c.free.size() < kMaxCachedBuffers && c.bytes + capacity <= kMaxCachedBytes) {
      c.free.push_back({data, capacity, now_ms()});
      c.bytes += capacity;
      return;
    }
  }
  delete[] data;
}

}  // namespace

LargeBuffer LargeBuffer::allocate(size_t n) {
  if (n < kCachedFrom) return LargeBuffer(new uint8_t[n], n);
  size_t want = (n + kGranule - 1) / kGranule * kGranule;
  Cache& c = cache();
  {
    std::lock_guard lock(c.mu);
    // The newest that fits and is not more than twice the size (a small
    // frame should not keep an 8 MiB buffer from the next large one).
    for (size_t i = c.free.size(); i-- > 0;) {
      Cached b = c.free[i];
      if (b.capacity < want || b.capacity > 2 * want) continue;
      c.free.erase(c.free.begin() + ptrdiff_t(i));
      c.bytes -= b.capacity;
      return LargeBuffer(b.data, b.capacity);
    }
  }
  return LargeBuffer(new uint8_t[want], want);
}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    capacity_ = o.capacity_;
    o.data_ = nullptr;
    o.capacity_ = 0;
  }
  return *this;
}

void LargeBuffer::release() {
  if (!data_) return;
  if (capacity_ >= kCachedFrom) give_back(data_, capacity_);
  else delete[] data_;
  data_ = nullptr;
  capacity_ = 0;
}

std::shared_ptr<const void> LargeBuffer::share() && {
  uint8_t* data = std::exchange(data_, nullptr);
  size_t capacity = std::exchange(capacity_, 0);
  return std::shared_ptr<const void>(data, [capacity](const void* p) {
    LargeBuffer last(static_cast<uint8_t*>(const_cast<void*>(p)), capacity);  // its destructor gives it back
  });
}

void trim_large_buffers(int64_t now) {
  std::vector<uint8_t*> idle;
  Cache& c = cache();
  {
    std::lock_guard lock(c.mu);
    if (c.free.empty()) return;
    for (size_t i = c.free.size(); i-- > 0;) {
      if (now - c.free[i].since_ms < kLargeBufferIdleMs) continue;
      idle.push_back(c.free[i].data);
      c.bytes -= c.free[i].capacity;
      c.free.erase(c.free.begin() + ptrdiff_t(i));
    }
  }
  for (uint8_t* p : idle) delete[] p;
}

LargeBufferCacheStats large_buffer_cache_stats() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return {c.free.size(), c.bytes};
}

}  // namespace ringsmb
