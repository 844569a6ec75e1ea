// Frame buffers (a WRITE of up to 8 MiB, its decrypted message), kept for
// the next frame instead of being freed. glibc gives a freed block of this
// size back to the kernel (munmap, or a trim with MADV_DONTNEED), and the
// next frame faults every page in again, each zeroed by the kernel: 16-21%
// of ringsmbd's CPU on smbclient's 8 MiB WRITEs (docs/PERFORMANCE.md,
// "Where the CPU goes", "Large files"). A large WRITE's buffer is freed on
// the blocking pool's thread after its pwrite, so the cache is process-wide.
// It keeps a few buffers and frees the ones unused for a few seconds
// (trim_large_buffers, from the workers' tick), so an idle server holds
// none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ringsmb {

class LargeBuffer {
 public:
  // From this size buffers go through the cache; smaller ones are plain
  // allocations, which glibc keeps in its arenas anyway.
  static constexpr size_t kCachedFrom = 256 * 1024;

  LargeBuffer() = default;
  // At least N bytes, not initialised (the caller writes before reading).
  static LargeBuffer allocate(size_t n);
  LargeBuffer(LargeBuffer&& o) noexcept : data_(o.data_), capacity_(o.capacity_) { o.data_ = nullptr, o.capacity_ = 0; }
  LargeBuffer& operator=(LargeBuffer&& o) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  ~LargeBuffer() { release(); }

  uint8_t* get() const { return data_; }
  size_t capacity() const { return capacity_; }
  explicit operator bool() const { return data_ != nullptr; }
  // Ownership as a shared_ptr whose last owner gives the buffer back to the
  // cache (FrameOwner::keep); this one is left empty.
  std::shared_ptr<const void> share() &&;

 private:
  LargeBuffer(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}
  void release();
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// Frees the cached buffers that nobody took for kLargeBufferIdleMs.
inline constexpr int64_t kLargeBufferIdleMs = 3000;
void trim_large_buffers(int64_t now_ms);
// Cached buffers and their bytes (tests, diagnostics).
struct LargeBufferCacheStats {
  size_t buffers = 0;
  size_t bytes = 0;
};
LargeBufferCacheStats large_buffer_cache_stats();

}  // namespace ringsmb
